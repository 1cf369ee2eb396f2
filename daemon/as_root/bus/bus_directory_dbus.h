#pragma once
/// The bus daemon's own answers about who is connected (bus_peers.h's BusDirectory), asked
/// over a connection of sandboxd's own that runs no event loop: a call waits on the thread that
/// makes it (a worker's or a job monitor's), never on the bus loop. It reports only what the
/// bus daemon recorded when each peer connected, never anything a peer says of itself.

#include <sdbus-c++/IConnection.h>
#include <sdbus-c++/IProxy.h>

#include <chrono>
#include <memory>

#include "bus/bus_peers.h"

namespace sandboxd {

class DBusBusDirectory final : public BusDirectory {
 public:
  /// `connection`: to the same bus as the daemon's own, and for these questions alone.
  explicit DBusBusDirectory(std::unique_ptr<sdbus::IConnection> connection);
  std::vector<std::string> Names() override;
  std::optional<PeerIdentity> Identity(const std::string& unique_name) override;

 private:
  /// The bus daemon answers from memory at once; this long means it is wedged.
  static constexpr std::chrono::seconds kTimeout{5};
  std::unique_ptr<sdbus::IConnection> connection_;
  std::unique_ptr<sdbus::IProxy> bus_;
};

}  // namespace sandboxd
