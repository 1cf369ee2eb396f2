#pragma once
/// Authorization through polkit (org.freedesktop.PolicyKit1.Authority.CheckAuthorization over
/// D-Bus, no GLib). Authority is the seam tests and callers use; PolkitAuthority asks polkitd
/// from a worker thread, never from the daemon's bus loop, because an interactive check waits
/// for a human. Callers with euid 0 are authorized
/// without asking, as systemd's daemons do.

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bus/caller.h"

namespace sdbus {
class IProxy;
}

namespace sandboxd {

/// A sandbox's roots as its polkit details and the messages about it name them: space-separated.
inline std::string JoinRoots(const std::vector<std::string>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : " ") + root;
  return text;
}

class Authority {
 public:
  virtual ~Authority() = default;
  /// Returns when authorized; throws Error(kAccessDenied) or
  /// Error(kInteractiveAuthorizationRequired) with a message naming `what`.
  virtual void Check(const Caller& caller, const std::string& action, const std::map<std::string, std::string>& details,
                     bool allow_interactive, const std::string& what) = 0;
};

/// Asks polkitd over one connection of its own, with its own event loop thread: calls are made
/// asynchronously, so a check waiting minutes for a password holds up no other check.
class PolkitAuthority final : public Authority {
 public:
  PolkitAuthority();
  ~PolkitAuthority() override;
  void Check(const Caller& caller, const std::string& action, const std::map<std::string, std::string>& details,
             bool allow_interactive, const std::string& what) override;

 private:
  /// polkit's own connection, its proxy and the thread that runs its loop.
  struct Link;
  std::shared_ptr<Link> Connect();
  void Forget();

  std::mutex mutex_;
  std::shared_ptr<Link> link_;
};

/// User mode (sandboxd --user): no polkit. The daemon runs as its user and can do nothing its
/// user could not do by hand, so that user is allowed every action and anybody else none (on a
/// session bus only root could try).
class OwnUserAuthority final : public Authority {
 public:
  void Check(const Caller& caller, const std::string& action, const std::map<std::string, std::string>& details,
             bool allow_interactive, const std::string& what) override;
};

}  // namespace sandboxd
