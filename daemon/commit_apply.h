#pragma once
/// Writes changes from a sandbox's upper layer into the live root. It runs in sandboxd-helper
/// with the owner's credentials, so the kernel checks every write against the owner; it never
/// follows a symlink in either tree and never leaves the root (every path is opened beneath
/// it). Each file lands whole: written to a temp file beside it, fsynced, renamed over.

#include <string>
#include <vector>

#include "change.h"

namespace sandboxd {

struct ApplyResult {
  size_t applied = 0;
  std::vector<std::string> skipped;  ///< "skipped P: sockets and device nodes are not committed"
};

/// Applies `changes` (sorted, parents first, as the scanner gives them) from `upper_root_fd`
/// into `live_root_fd`. Throws Error naming the path on the first failure.
ApplyResult ApplyChanges(const std::vector<Change>& changes, int live_root_fd, int upper_root_fd);

}  // namespace sandboxd
