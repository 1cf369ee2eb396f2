#pragma once
/// Proof that the daemon's bus loop still answers, for the systemd watchdog: a second
/// connection pings the main connection's unique name (org.freedesktop.DBus.Peer.Ping, which
/// sd-bus answers inside the loop's own dispatch). A thread that merely runs proves nothing;
/// a loop wedged behind a stuck handler fails the ping and systemd restarts the daemon.

#include <sdbus-c++/IConnection.h>
#include <sdbus-c++/IProxy.h>

#include <chrono>
#include <memory>
#include <string>

namespace sandboxd {

class LoopProbe {
 public:
  /// `probe` is a connection of its own to the same bus as the loop's, whose unique name is
  /// `loop_name`.
  LoopProbe(std::unique_ptr<sdbus::IConnection> probe, const std::string& loop_name);
  /// True when the loop answered within `timeout`.
  bool Answers(std::chrono::milliseconds timeout);

 private:
  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IProxy> loop_;
};

}  // namespace sandboxd
