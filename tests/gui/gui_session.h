#pragma once
/// A private desktop for one unprivileged user, in which a GTK app runs headless and can be
/// driven over AT-SPI (atspi_driver.h): an Xvfb display, a session bus, the accessibility bus
/// (at-spi-bus-launcher) and its registry, all run as that user, and the apps the test starts.
/// Everything it starts it stops again, by the process groups it saved; it never touches the
/// host's display or buses.

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "user_process.h"

namespace sandboxd::it {

class GuiSession {
 public:
  /// The session of `user` (an unprivileged user, such as kAlice); nothing starts before Start.
  explicit GuiSession(std::string user);
  ~GuiSession();
  GuiSession(const GuiSession&) = delete;
  GuiSession& operator=(const GuiSession&) = delete;

  /// Starts the display, the session bus, the accessibility bus and its registry, and waits
  /// (each step at most 20 s) until each answers. False with `why` (naming the step, with its
  /// log) where one did not; the destructor still stops what did start.
  bool Start(std::string& why);

  /// Starts `argv` as the user in this session (its display and buses, the test's system bus,
  /// GDK_BACKEND=x11, GSK_RENDERER=cairo, ...) with `extra_env` added or replacing; its output
  /// goes to AppLog(). Returns its pid, or -1 (the reason is then in AppLog(); always before a
  /// successful Start()).
  pid_t StartApp(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
  /// SIGTERM to the app's process group, SIGKILL after 5 s; reaps it.
  void StopApp(pid_t pid);
  /// Whether an app StartApp started still runs (false once it exited, crashed or was stopped).
  bool AppRunning(pid_t pid) const;
  /// What all apps of the session wrote, for failure messages.
  std::string AppLog() const;

  /// Writes the whole screen to `png_path` (ImageMagick's `import`); "" when it did, else why not.
  std::string Screenshot(const std::string& png_path) const;

  const std::string& user() const { return user_; }
  /// The X display, ":90" or the like.
  const std::string& display() const { return display_; }
  const std::string& session_bus_address() const { return session_bus_address_; }
  const std::string& a11y_bus_address() const { return a11y_bus_address_; }
  /// The session's own directory (logs; XDG_RUNTIME_DIR is runtime/ below it), removed with it.
  const std::string& dir() const { return dir_; }

 private:
  /// A process the session started: the leader of a process group of its own.
  struct Child {
    std::string what;
    std::string log;
  };
  bool StartDisplay(std::string& why);
  bool StartSessionBus(std::string& why);
  bool StartA11yBus(std::string& why);
  bool StartRegistry(std::string& why);
  /// The environment of everything the session runs: who, where, and which display and bus.
  std::vector<std::string> BaseEnvironment() const;
  /// Runs `gdbus call --address ADDRESS ARGS...` as the user; its output, or "" if it failed.
  std::string GdbusCall(const std::string& address, const std::vector<std::string>& args) const;
  /// Polls `ready` every 100 ms for 20 s; false (with `why`) at the end, or as soon as the
  /// process `pid` exits.
  bool WaitReady(pid_t pid, const char* what, const std::function<bool()>& ready, std::string& why) const;
  std::string ExitedText(pid_t pid) const;

  std::string user_;
  UserIds ids_;
  std::string dir_;
  std::string runtime_dir_;
  std::string display_;
  std::string session_bus_address_;
  std::string a11y_bus_address_;
  std::vector<pid_t> infrastructure_;  ///< in the order started; stopped in reverse
  std::map<pid_t, Child> children_;
  std::vector<pid_t> apps_;
};

}  // namespace sandboxd::it
