#pragma once
/// Sends a signal about a sandbox (or one of its jobs) to its owner's connections only: one
/// copy per connection, each addressed to it (unicast). Never a broadcast: a signal names the
/// sandbox or job and says what it did (change counts, output sizes, exit statuses), which is
/// the owner's business alone. Root's connections get none unless root is the owner: root can
/// call GetInfo on any sandbox, and a bus monitor as root sees everything anyway, so sending
/// root copies would only cost. Never call it on the bus loop thread (BusPeers asks the bus
/// daemon); it never throws: a signal that cannot be sent is logged and dropped, never sent
/// to a wider audience instead.

#include <sdbus-c++/sdbus-c++.h>
#include <sys/types.h>

#include <exception>
#include <string>

#include <spdlog/spdlog.h>

#include "bus/bus_loop.h"
#include "bus/bus_peers.h"

namespace sandboxd {

template <typename... Args>
void EmitToOwner(sdbus::IObject& object, BusPeers& peers, uid_t owner, const char* interface, const char* member,
                 const Args&... args) noexcept {
  std::vector<std::string> recipients;
  try {
    recipients = peers.ConnectionsOf(owner);
  } catch (const std::exception& e) {
    spdlog::warn("{} {}.{} not sent: {}", object.getObjectPath(), interface, member, e.what());
    return;
  }
  for (const auto& recipient : recipients) {
    try {
      sdbus::Signal signal = object.createSignal(interface, member);
      (signal << ... << args);
      signal.setDestination(recipient);
      object.emitSignal(signal);
    } catch (const std::exception& e) {
      // A connection that left a moment ago; the others still get theirs.
      spdlog::debug("{} {}.{} not sent to {}: {}", object.getObjectPath(), interface, member, recipient, e.what());
    }
  }
  WakeBusLoop();
}

}  // namespace sandboxd
