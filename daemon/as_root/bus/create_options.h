#pragma once
/// The options of Manager.CreateSandbox (its `options` a{sv}), checked strictly: an unknown key,
/// a value of the wrong type or out of range is refused with a message naming it, never ignored.
/// It only reads the map: defaults (the configured quota and ttl) are the caller's to apply.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "network/host_rules.h"

namespace sandboxd {

struct CreateOptions {
  std::optional<std::string> name;  ///< "name" (s): the sandbox's name; unset: derived from the first root
  bool network = false;             ///< "network" (b): its jobs may use the network (polkit asks)
  /// "allow_hosts" (as): the hosts its jobs may reach by name (polkit asks unless [Network]
  /// AllowedHosts= covers them); excludes "network"
  std::vector<network::HostRule> allow_hosts;
  bool shared = false;              ///< "shared" (b): its roots may overlap other shared sandboxes'
  /// "made_by_try" (b): sandboxctl try made it; try may offer to reuse or drop it (none other)
  bool made_by_try = false;
  /// "scratch_home" (b): its jobs may write the owner's home, into a layer of the sandbox's own
  bool scratch_home = false;
  std::vector<std::string> hide;    ///< "hide" (as): absolute paths every job sees empty
  /// "allow_sockets" (as): host sockets every job may reach (host_sockets.h), absolute paths
  std::vector<std::string> allow_sockets;
  std::optional<uint64_t> ttl_sec;  ///< "ttl_sec" (t): idle this long, it is collected; unset: configured default
  /// "quota_bytes" (t): bytes its upper layers may hold; unset: configured default (and MaxQuota=)
  std::optional<uint64_t> quota_bytes;
};

/// A smaller quota would be eaten by the directories a job's first file needs.
inline constexpr uint64_t kMinSandboxQuotaBytes = 1 << 20;
inline constexpr uint64_t kMaxSandboxTtlSec = 10ull * 366 * 86400;

/// Throws Error(kInvalidArgument) naming the option, or Error(kInvalidPath) naming a hidden path
/// that is not absolute or has a ".." component (HiddenPathSyntaxError). Keys are read in the
/// map's order and the first bad one is refused.
CreateOptions ParseCreateOptions(const std::map<std::string, sdbus::Variant>& options);

}  // namespace sandboxd
