#pragma once
/// Checks that a directory may become a sandbox root, as the security model says: absolute,
/// existing, a directory the caller can write (checked with the caller's own credentials, not
/// the daemon's), canonicalised, not a system directory nor sandboxd's own state, and not
/// nesting with another root. It never creates or changes anything.

#include <optional>
#include <string>
#include <vector>

#include "credentials.h"

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

/// The whole check for one root given by `user`; returns the canonical path.
/// Throws Error(kInvalidPath) naming the path and the reason.
std::string ValidateRoot(const std::string& path, const UserCredentials& user, const ForbiddenAreas& areas);

/// Refuses roots of one request that nest or coincide (Error kOverlap).
void CheckRootsDisjoint(const std::vector<std::string>& canonical_roots);

}  // namespace sandboxd
