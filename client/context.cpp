#include "context.h"

#include "api.h"
#include "proxies.h"

namespace sandboxctl {

sdbus::IConnection& Context::Bus() {
  if (!bus_) {
    if (user_mode) throw sdbus::Error("org.freedesktop.DBus.Error.NotSupported", "--user (session-bus mode) is not available in this version");
    bus_ = sdbus::createSystemBusConnection();
  }
  return *bus_;
}

uint64_t Context::InteractiveFlag() const { return no_ask_password ? 0 : sandboxd::api::kFlagAllowInteractive; }

std::string Context::ResolveSandbox(const std::string& id_or_name) {
  ManagerProxy manager(Bus());
  return manager.GetSandbox(id_or_name);
}

}  // namespace sandboxctl
