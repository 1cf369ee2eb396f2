#pragma once
/// Which of the host's unix sockets a job may reach by path. A job sees the host read-only, and
/// read-only does not stop connect(): every socket the host bound where the job can see it
/// would be reachable (a root service's, the owner's own agent's). So a job's /run is its own
/// (bwrap_args.h), sockets inside its roots are out of reach already (a connect through the
/// overlay is refused: the overlay's inode is not the socket), and every other socket the host
/// has bound by a path is hidden at job start (hidden_paths.h; one in another user's home is out
/// of sight already, under the cover of the homes' directory), but for those the owner names
/// (`--allow-socket`), which are bound into the job at their own path.
///
/// What this cannot close on a kernel without Landlock's LANDLOCK_ACCESS_FS_RESOLVE_UNIX (ABI 9):
/// a socket bound after the job started, or bound in another network namespace (not listed in
/// the host's /proc/net/unix), outside /run, /tmp, /var/tmp, the roots and the other homes,
/// stays reachable by the job (daemon start-up says so; docs/security.md's threat model too).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/credentials.h"

namespace sandboxd {

/// Most sockets one sandbox or one job may name with --allow-socket.
inline constexpr size_t kMaxAllowedSockets = 64;

/// The paths of the sockets bound by a path in `proc_net_unix` (the text of /proc/net/unix):
/// abstract and unnamed sockets are left out, and each path once. A path may hold spaces (the
/// last field runs to the end of the line); one with a newline splits into lines that name
/// nothing or other paths: callers look each path up and keep only real sockets.
std::vector<std::string> BoundSocketPaths(std::string_view proc_net_unix);

/// BoundSocketPaths of the daemon's network namespace (the host's); empty when /proc/net/unix
/// cannot be read (logged once by the caller's start-up check, not per job).
std::vector<std::string> HostBoundSocketPaths();

/// Why `path` cannot be named with --allow-socket as written (not absolute, a ".." component,
/// a NUL), or "" when its form is fine.
std::string AllowedSocketSyntaxError(const std::string& path);

/// `path` resolved as `owner` would resolve it (symlinks followed, with the owner's file-system
/// identity) when it is a socket the owner can reach; nullopt for anything else (missing, out
/// of the owner's reach, another kind of file, a lookup that failed).
std::optional<std::string> SocketTheOwnerReaches(const std::string& path, const UserCredentials& owner);

/// `path` resolved as `owner` would resolve it (symlinks followed, with the owner's file-system
/// identity), when it is a socket the owner can reach; else throws Error(kInvalidPath) saying
/// "cannot allow socket PATH for WHAT: it is not a socket you can reach" (the same words whether
/// it is missing, unreachable or another kind of file: what the owner cannot reach is not told).
std::string ResolveAllowedSocket(const std::string& path, const UserCredentials& owner, const std::string& what);

}  // namespace sandboxd
