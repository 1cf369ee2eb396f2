#pragma once
/// Like systemctl: when polkit may need a password, a terminal is there and we are not root,
/// start pkttyagent for the duration of the call, so that the prompt appears in this terminal.

#include <sys/types.h>

namespace sandboxctl {

class PolkitAgent {
 public:
  /// Starts `pkttyagent --notify-fd N --fallback` if stdin is a tty and euid != 0, and waits
  /// until it has registered. Does nothing otherwise, or if pkttyagent is missing.
  PolkitAgent();
  ~PolkitAgent();
  PolkitAgent(const PolkitAgent&) = delete;
  PolkitAgent& operator=(const PolkitAgent&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace sandboxctl
