#pragma once
/// A sandboxctl running as a user on a pseudo-terminal of the test's, answered as a person
/// would: wait until a text appears, then type. The test keeps the terminal's slave side open,
/// so that it can read the terminal's modes while the program runs and after it has gone.

#include <sys/types.h>
#include <termios.h>

#include <chrono>
#include <string>
#include <vector>

namespace sandboxd::it {

class Conversation {
 public:
  /// `sandboxctl ARGS...` as `user` in `cwd`, on a terminal of `rows` x `columns`; its stdout
  /// goes to `stdout_file` instead when one is named.
  Conversation(const std::string& user, const std::string& cwd, const std::vector<std::string>& sandboxctl_args,
               const std::string& stdout_file = "", unsigned short rows = 24, unsigned short columns = 80);
  ~Conversation();
  Conversation(const Conversation&) = delete;
  Conversation& operator=(const Conversation&) = delete;

  /// Reads until `text` appears after what earlier waits found; false if it never does.
  bool WaitFor(const std::string& text, std::chrono::seconds timeout = std::chrono::seconds(30));
  void Type(const std::string& keys);
  /// Waits for `text`, then types `keys`; false (and nothing typed) if it never appears.
  bool Answer(const std::string& text, const std::string& keys);
  /// Reads until the program has ended; its exit status (128+N for signal N), -1 on timeout.
  int Finish(std::chrono::seconds timeout = std::chrono::seconds(60));
  /// The terminal changes size, as a window does (the program gets SIGWINCH).
  void Resize(unsigned short rows, unsigned short columns);
  termios Modes() const;
  pid_t pid() const { return pid_; }
  const std::string& screen() const { return screen_; }

 private:
  /// Takes what the terminal shows within `wait`; false once nothing more can come.
  bool ReadSome(std::chrono::milliseconds wait);

  int master_ = -1;
  int slave_ = -1;
  pid_t pid_ = -1;
  int status_ = -1;
  std::string screen_;
  size_t seen_ = 0;
};

}  // namespace sandboxd::it
