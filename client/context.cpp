#include "context.h"

#include <cctype>
#include <cstdlib>

#include "api.h"
#include "object_paths.h"
#include "proxies.h"

namespace sandboxctl {

sdbus::IConnection& Context::Bus() {
  if (!bus_) {
    bus_ = OpenBus();
  }
  return *bus_;
}

std::unique_ptr<sdbus::IConnection> Context::OpenBus() const {
  // --user: the user's own sandboxd on the session bus (sandboxd --user).
  try {
    return user_mode ? sdbus::createSessionBusConnection() : sdbus::createSystemBusConnection();
  } catch (const sdbus::Error& e) {
    // sd-bus says only "Failed to open bus": name the bus and where it was looked for.
    const char* variable = user_mode ? "DBUS_SESSION_BUS_ADDRESS" : "DBUS_SYSTEM_BUS_ADDRESS";
    const char* address = std::getenv(variable);
    std::string where = address ? std::string(variable) + "=" + address
                                : user_mode ? "no DBUS_SESSION_BUS_ADDRESS, nor a bus in $XDG_RUNTIME_DIR"
                                            : "/run/dbus/system_bus_socket";
    throw sdbus::Error(e.getName(), std::string("cannot connect to the ") + (user_mode ? "session" : "system") + " bus (" + where +
                                        "): " + e.getMessage());
  }
}

uint64_t Context::InteractiveFlag() const { return no_ask_password ? 0 : sandboxd::api::kFlagAllowInteractive; }

std::string Context::ResolveSandboxFast(const std::string& id_or_name) {
  if (id_or_name.size() == 16 && sandboxd::api::IsValidId(id_or_name)) return sandboxd::api::SandboxPath(id_or_name);
  return ResolveSandbox(id_or_name);
}

std::string Context::NamedAsTyped(std::string message) const {
  for (const auto& [typed, path] : resolved_) {
    const std::string id = path.substr(path.rfind('/') + 1);
    if (typed == id) continue;
    const std::string by_id = "sandbox " + id, by_name = "sandbox " + typed + " (" + id + ")";
    for (size_t at = message.find(by_id); at != std::string::npos; at = message.find(by_id, at + by_name.size())) {
      // Whole ids only: one id may begin another's text no more than a word may.
      const size_t end = at + by_id.size();
      if (end < message.size() && isalnum(static_cast<unsigned char>(message[end]))) {
        at += 1;
        continue;
      }
      message.replace(at, by_id.size(), by_name);
    }
  }
  return message;
}

std::string Context::ResolveSandbox(const std::string& id_or_name) {
  // One verb may name its sandbox many times (try, review): one lookup each is enough, since a
  // sandbox's object path never changes (and calls on a destroyed one fail with NotFound).
  auto known = resolved_.find(id_or_name);
  if (known != resolved_.end()) return known->second;
  ManagerProxy manager(Bus());
  std::string path = manager.GetSandbox(id_or_name);
  resolved_[id_or_name] = path;
  return path;
}

}  // namespace sandboxctl
