#include "bus/polkit.h"

#include <unistd.h>

#include <sdbus-c++/sdbus-c++.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <tuple>

#include <spdlog/spdlog.h>

#include "base/errors.h"

namespace sandboxd {
namespace {

constexpr const char* kPolkitBusName = "org.freedesktop.PolicyKit1";
constexpr const char* kPolkitPath = "/org/freedesktop/PolicyKit1/Authority";
constexpr const char* kPolkitInterface = "org.freedesktop.PolicyKit1.Authority";
constexpr uint32_t kAllowUserInteraction = 1;

using Subject = sdbus::Struct<std::string, std::map<std::string, sdbus::Variant>>;
using AuthorizationResult = sdbus::Struct<bool, bool, std::map<std::string, std::string>>;

}  // namespace

/// The loop of polkit's connection runs on a thread of ours, not on the one sdbus-c++ 1.2
/// starts for a proxy that owns its connection: that one lets the error out of the thread when
/// the bus goes away (a stopping system), and the uncaught exception aborted the whole daemon.
/// Ours logs it and ends; the next check connects afresh.
struct PolkitAuthority::Link {
  std::unique_ptr<sdbus::IConnection> connection = sdbus::createSystemBusConnection();
  std::unique_ptr<sdbus::IProxy> proxy = sdbus::createProxy(*connection, kPolkitBusName, kPolkitPath);
  std::atomic<bool> lost{false};
  std::thread loop{[this] {
    try {
      connection->enterEventLoop();
    } catch (const std::exception& e) {
      spdlog::warn("lost the connection to polkit: {}", e.what());
    }
    lost = true;
  }};

  ~Link() {
    try {
      connection->leaveEventLoop();
    } catch (const std::exception&) {
    }
    loop.join();
  }
};

PolkitAuthority::PolkitAuthority() = default;
PolkitAuthority::~PolkitAuthority() = default;

std::shared_ptr<PolkitAuthority::Link> PolkitAuthority::Connect() {
  std::lock_guard lock(mutex_);
  if (!link_ || link_->lost) link_ = std::make_shared<Link>();
  return link_;
}

void PolkitAuthority::Forget() {
  std::lock_guard lock(mutex_);
  link_.reset();
}

void PolkitAuthority::Check(const Caller& caller, const std::string& action,
                            const std::map<std::string, std::string>& details, bool allow_interactive,
                            const std::string& what) {
  if (caller.IsRoot()) return;

  // Subject "system-bus-name": polkitd looks the sender up itself, so the identity it judges is
  // the bus's, not one we pass along.
  Subject subject{"system-bus-name", std::map<std::string, sdbus::Variant>{{"name", sdbus::Variant(caller.sender)}}};
  auto answer = std::make_shared<std::promise<AuthorizationResult>>();
  std::future<AuthorizationResult> reply = answer->get_future();
  auto timeout = allow_interactive ? std::chrono::minutes(10) : std::chrono::minutes(1);
  std::shared_ptr<Link> link;
  try {
    link = Connect();
    link->proxy->callMethodAsync("CheckAuthorization")
        .onInterface(kPolkitInterface)
        .withTimeout(timeout)
        .withArguments(subject, action, details, allow_interactive ? kAllowUserInteraction : 0u, std::string())
        .uponReplyInvoke([answer](const sdbus::Error* error, AuthorizationResult result) {
          if (error) answer->set_exception(std::make_exception_ptr(*error));
          else answer->set_value(std::move(result));
        });
  } catch (const sdbus::Error& e) {
    Forget();
    throw Error(Code::kAccessDenied, "cannot ask polkit whether you may " + what + " (" + e.getMessage() + ")");
  }
  AuthorizationResult result;
  try {
    // The bus times the call out; should the connection's loop end first (the bus went away),
    // nothing answers it, and this wait ends on its own.
    if (reply.wait_for(timeout + std::chrono::seconds(5)) != std::future_status::ready) {
      Forget();
      throw Error(Code::kAccessDenied, "cannot ask polkit whether you may " + what + " (it did not answer)");
    }
    result = reply.get();
  } catch (const sdbus::Error& e) {
    // polkitd may have restarted: the next check starts afresh.
    if (e.getName() == "org.freedesktop.DBus.Error.ServiceUnknown" || e.getName() == "org.freedesktop.DBus.Error.NoReply")
      Forget();
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

void OwnUserAuthority::Check(const Caller& caller, const std::string&, const std::map<std::string, std::string>&, bool,
                             const std::string& what) {
  if (caller.uid == geteuid()) return;
  throw Error(Code::kAccessDenied, "this sandboxd --user serves uid " + std::to_string(geteuid()) + " only; uid " +
                                       std::to_string(caller.uid) + " may not " + what);
}

}  // namespace sandboxd
