#pragma once
/// Authorization through polkit (org.freedesktop.PolicyKit1.Authority.CheckAuthorization over
/// D-Bus, no GLib). Authority is the seam tests and callers use; PolkitAuthority asks polkitd
/// on its own connection per check, from a worker thread, because an interactive check waits
/// for a human and must never stall the daemon's bus loop. Callers with euid 0 are authorized
/// without asking, as systemd's daemons do.

#include <map>
#include <string>

#include "caller.h"

namespace sandboxd {

class Authority {
 public:
  virtual ~Authority() = default;
  /// Returns when authorized; throws Error(kAccessDenied) or
  /// Error(kInteractiveAuthorizationRequired) with a message naming `what`.
  virtual void Check(const Caller& caller, const std::string& action, const std::map<std::string, std::string>& details,
                     bool allow_interactive, const std::string& what) = 0;
};

class PolkitAuthority final : public Authority {
 public:
  void Check(const Caller& caller, const std::string& action, const std::map<std::string, std::string>& details,
             bool allow_interactive, const std::string& what) override;
};

}  // namespace sandboxd
