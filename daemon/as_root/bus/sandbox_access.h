#pragma once
/// Who may act on a sandbox (and on its jobs): its owner, root, or a caller polkit allows
/// org.sandboxd.sandbox1.manage for this sandbox and verb. One rule for both D-Bus faces, so a
/// new method cannot forget a branch of it. It asks polkit, which may wait for a person, so it
/// must never run on the bus loop thread; it never changes anything.

#include <sys/types.h>

#include <string>
#include <vector>

#include "bus/caller.h"

namespace sandboxd {

class Authority;

/// The sandbox an act is aimed at, as polkit's details and the refusal name it.
struct ActTarget {
  std::string sandbox_id;
  uid_t owner = static_cast<uid_t>(-1);
  std::vector<std::string> roots;
  std::string object;  ///< what the refusal names: "sandbox 3fa2" or "job 9c1e of sandbox 3fa2"
};

/// How the caller was let in.
enum class Access {
  kOwner,    ///< the sandbox is the caller's
  kRoot,     ///< euid 0, not asked (DESIGN.md: as systemd's daemons do)
  kManager,  ///< another user's sandbox, allowed by polkit's manage action: log the act
};

/// Returns how `caller` may do `verb` ("commit", "get-info", ...) on `target`; throws
/// Error(kAccessDenied) (or kInteractiveAuthorizationRequired when polkit would ask and
/// `allow_interactive` is false) naming the object otherwise.
Access AuthorizeAct(Authority& authority, const Caller& caller, const ActTarget& target, const std::string& verb,
                    bool allow_interactive);

}  // namespace sandboxd
