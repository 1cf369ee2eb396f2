#pragma once
/// Like systemctl: when polkit may need a password, a terminal is there and we are not root,
/// start pkttyagent for the duration of the call, so that the prompt appears in this terminal.
/// Unlike systemctl's, it is registered for sandboxctl's own process (--process), so it works
/// without a login session too, and a session's graphical agent does not take the prompt away
/// from the terminal the command was typed in.

#include <sys/types.h>

namespace sandboxctl {

class PolkitAgent {
 public:
  /// Starts `pkttyagent --process OUR_PID --notify-fd N` if stdin is a tty and euid != 0, and waits
  /// until it has registered. Does nothing otherwise, or if pkttyagent is missing.
  PolkitAgent();
  ~PolkitAgent();
  PolkitAgent(const PolkitAgent&) = delete;
  PolkitAgent& operator=(const PolkitAgent&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace sandboxctl
