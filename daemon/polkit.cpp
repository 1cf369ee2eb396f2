#include "polkit.h"

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <tuple>

#include "errors.h"

namespace sandboxd {
namespace {

constexpr const char* kPolkitBusName = "org.freedesktop.PolicyKit1";
constexpr const char* kPolkitPath = "/org/freedesktop/PolicyKit1/Authority";
constexpr const char* kPolkitInterface = "org.freedesktop.PolicyKit1.Authority";
constexpr uint32_t kAllowUserInteraction = 1;

}  // namespace

void PolkitAuthority::Check(const Caller& caller, const std::string& action,
                            const std::map<std::string, std::string>& details, bool allow_interactive,
                            const std::string& what) {
  if (caller.IsRoot()) return;

  // Subject "system-bus-name": polkitd looks the sender up itself, so the identity it judges is
  // the bus's, not one we pass along.
  sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>> subject{
      "system-bus-name", std::map<std::string, sdbus::Variant>{{"name", sdbus::Variant(caller.sender)}}};
  sdbus::Struct<bool, bool, std::map<std::string, std::string>> result;
  try {
    // A connection of its own per check: a check that waits minutes for a password must not
    // hold up anything else.
    auto connection = sdbus::createSystemBusConnection();
    auto proxy = sdbus::createProxy(*connection, kPolkitBusName, kPolkitPath);
    auto timeout = allow_interactive ? std::chrono::minutes(10) : std::chrono::minutes(1);
    proxy->callMethod("CheckAuthorization")
        .onInterface(kPolkitInterface)
        .withTimeout(timeout)
        .withArguments(subject, action, details, allow_interactive ? kAllowUserInteraction : 0u, std::string())
        .storeResultsTo(result);
  } catch (const sdbus::Error& e) {
    throw Error(Code::kAccessDenied, "cannot ask polkit whether you may " + what + " (" + e.getMessage() + ")");
  }
  bool authorized = result.get<0>();
  bool challenge = result.get<1>();
  if (authorized) return;
  if (challenge)
    throw Error(Code::kInteractiveAuthorizationRequired,
                "authentication is required to " + what + " (polkit action " + action + ")");
  throw Error(Code::kAccessDenied, "not authorized to " + what + " (polkit action " + action + ")");
}

}  // namespace sandboxd
