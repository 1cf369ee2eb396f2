#pragma once
/// Single keystrokes from the terminal on stdin, as `git add -p` reads them: while a
/// TerminalKeys lives, each key arrives as it is typed, without Enter and without echo.
/// The terminal is put back as it was on every way out. Leaving the scope (a return or an
/// exception) restores it; SIGINT, SIGTERM, SIGHUP and SIGQUIT end the reading instead of the
/// process, so that the owner unwinds and the destructor runs; Ctrl-Z hands the shell its
/// terminal as it was while we are stopped and takes it back on `fg`.

#include <signal.h>
#include <termios.h>

#include <array>
#include <optional>

namespace sandboxctl {

class TerminalKeys {
 public:
  TerminalKeys();
  ~TerminalKeys();
  TerminalKeys(const TerminalKeys&) = delete;
  TerminalKeys& operator=(const TerminalKeys&) = delete;

  /// The next key; nothing at the end of input or once one of the signals above came.
  std::optional<char> Next();
  /// The signal that ended the reading, or 0.
  int Signal() const;

 private:
  static constexpr std::array<int, 4> kEndingSignals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  bool terminal_ = false;
  std::array<struct sigaction, kEndingSignals.size()> previous_{};
  struct sigaction previous_stop_ {};
};

}  // namespace sandboxctl
