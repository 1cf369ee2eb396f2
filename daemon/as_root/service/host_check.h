#pragma once
/// What this machine lets sandboxd do, checked once at start-up, so that a daemon running
/// somewhere jobs cannot work (a container without user namespaces, a kernel without
/// overlayfs, sandboxd itself inside bwrap) says so at once and exactly, instead of failing
/// each job later with bwrap's one-line complaint.

#include <optional>
#include <string>
#include <vector>

namespace sandboxd {

/// The facts a diagnosis needs, read from the machine (ReadHostFacts) or made up in tests.
struct HostFacts {
  std::string container;          ///< "docker", "podman", "lxc", "bwrap", ... or "" (none seen)
  std::optional<long> max_user_namespaces;             ///< /proc/sys/user/max_user_namespaces
  std::optional<long> unprivileged_userns_clone;       ///< Debian's kernel.unprivileged_userns_clone
  std::optional<long> apparmor_restrict_userns;        ///< kernel.apparmor_restrict_unprivileged_userns
  bool overlay_listed = true;     ///< "overlay" in /proc/filesystems
  std::string overlay_error;      ///< why a trial overlay mount failed ("" if it worked)
  std::string bwrap_error;        ///< bwrap's complaint when a trial job failed ("" if it worked)
};

HostFacts ReadHostFacts();

/// One sentence per problem, each naming what is missing and where to change it; empty when
/// jobs can run.
std::vector<std::string> DiagnoseHost(const HostFacts& facts);

}  // namespace sandboxd
