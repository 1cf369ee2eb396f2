#include "bus/bus_directory_dbus.h"

#include <sdbus-c++/sdbus-c++.h>

#include <map>

namespace sandboxd {
namespace {

constexpr const char* kBusDaemon = "org.freedesktop.DBus";
constexpr const char* kBusPath = "/org/freedesktop/DBus";

}  // namespace

DBusBusDirectory::DBusBusDirectory(std::unique_ptr<sdbus::IConnection> connection)
    : connection_(std::move(connection)), bus_(sdbus::createProxy(*connection_, kBusDaemon, kBusPath)) {}

std::vector<std::string> DBusBusDirectory::Names() {
  std::vector<std::string> names;
  bus_->callMethod("ListNames").onInterface(kBusDaemon).withTimeout(kTimeout).storeResultsTo(names);
  return names;
}

std::optional<PeerIdentity> DBusBusDirectory::Identity(const std::string& unique_name) {
  // One call for both the uid and the pid (dbus-daemon 1.7+, dbus-broker): the uid the bus
  // daemon took from the socket's peer credentials when the connection was made.
  std::map<std::string, sdbus::Variant> credentials;
  try {
    bus_->callMethod("GetConnectionCredentials")
        .onInterface(kBusDaemon)
        .withTimeout(kTimeout)
        .withArguments(unique_name)
        .storeResultsTo(credentials);
  } catch (const sdbus::Error& e) {
    if (e.getName() == "org.freedesktop.DBus.Error.NameHasNoOwner") return std::nullopt;
    throw;
  }
  auto uid = credentials.find("UnixUserID");
  // Without a uid the peer is no one's: never a recipient.
  if (uid == credentials.end()) return PeerIdentity{};
  PeerIdentity identity;
  identity.uid = static_cast<uid_t>(uid->second.get<uint32_t>());
  if (auto pid = credentials.find("ProcessID"); pid != credentials.end()) identity.pid = static_cast<pid_t>(pid->second.get<uint32_t>());
  return identity;
}

}  // namespace sandboxd
