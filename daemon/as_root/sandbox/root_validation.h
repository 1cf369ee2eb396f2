#pragma once
/// Checks that a directory may become a sandbox root, as the security model says: absolute,
/// existing, a directory the caller can write, not a system directory nor sandboxd's own
/// state, and not nesting with another root. The root is opened once, with the caller's own
/// credentials (never the daemon's), and every check, the canonical path and the mount follow
/// that descriptor: a name is never looked up twice, so a symlink swapped between two lookups
/// cannot turn the caller's directory into /etc. It never creates or changes anything.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"

namespace sandboxd {

struct ForbiddenAreas {
  std::string state_dir;  ///< canonical --state-dir
  std::string run_dir;    ///< canonical --run-dir
};

/// Whether the canonical absolute path `outer` is `inner` or one of its ancestors ("/" holds
/// every path). Plain string arithmetic: both must already be canonical.
bool PathHolds(const std::string& outer, const std::string& inner);
/// True when one path equals the other or lies beneath it (both canonical, absolute).
bool PathsOverlap(const std::string& a, const std::string& b);

/// Why a canonical path may not be a root ("/proc is a system directory"), or nullopt.
std::optional<std::string> ForbiddenReason(const std::string& canonical, const ForbiddenAreas& areas);

/// Lexical checks only: absolute, no NUL, not too long. Throws Error(kInvalidPath).
void CheckRootSyntax(const std::string& path);

/// A root as its caller opened it: the descriptor that the sandbox's first mount is made
/// from, and the canonical path read back from that descriptor.
struct OpenedRoot {
  UniqueFd fd;            ///< O_PATH|O_DIRECTORY, opened with the caller's credentials
  std::string canonical;  ///< absolute, no symlinks; what the kernel says the descriptor is
  dev_t dev = 0;
  ino_t ino = 0;
};

/// The path the target of a /proc/self/fd/N link names, or nullopt when it names none that a
/// lookup from "/" would reach (not absolute: another mount namespace, a pipe; or the
/// directory is deleted, which the kernel shows as " (deleted)" after the path; `deleted` is
/// what fstat said of the descriptor, since a name may end in that text too).
std::optional<std::string> PathFromFdLink(const std::string& link_target, bool deleted);

/// The whole check for one root given by `user`: opens `path` once, in a child that has
/// dropped to the user's uid, gid and groups, checks on that descriptor that the user may
/// write and enter it, takes the canonical path from it and refuses forbidden areas on that.
/// Throws Error(kInvalidPath) naming the path and the reason.
OpenedRoot OpenRoot(const std::string& path, const UserCredentials& user, const ForbiddenAreas& areas);

/// The other side of an overlap: a sandbox that exists, as the caller of a create may learn of it.
struct OverlapParty {
  std::string id;
  std::string root;  ///< its root that overlaps
  bool shared = false;
  bool callers = false;  ///< the caller's own sandbox (or the caller may see every sandbox)
};

/// Why root `mine` of a new sandbox (created --shared when `mine_shared`) is refused over
/// `other`: "root /p overlaps root /p/q of sandbox 3fa2 (both must be created --shared to
/// overlap)". Another user's sandbox is not the caller's business: its id, root and owner are
/// not named, only that it exists ("root /p overlaps a sandbox of another user"), with the
/// hint to ask for --shared only where that would help (theirs is shared, the new one is not).
std::string DescribeOverlap(const std::string& mine, bool mine_shared, const OverlapParty& other);

/// Refuses roots of one request that nest or coincide (Error kOverlap).
void CheckRootsDisjoint(const std::vector<std::string>& canonical_roots);

}  // namespace sandboxd
