#pragma once
/// Which changes of a commit meet a live entry that changed since the sandbox last agreed with
/// the live tree (its creation, or its last commit). "Changed" is read from the entry's ctime,
/// which every write, chmod, chown, rename into place or replacement moves forward and which no
/// tool can set back (unlike mtime: cp -p, tar and touch -d set it at will). Directories are
/// not compared by ctime (adding a file to a directory moves its ctime): only a live directory
/// that is no longer a directory conflicts. A live entry the sandbox had copied up and that
/// was deleted from the live tree since is a conflict too. Whether a changed file holds what the
/// sandbox holds anyway (no conflict then) needs the owner's rights and is decided by the caller.

#include <cstdint>
#include <string>
#include <vector>

#include "change.h"

namespace sandboxd {

struct ConflictCandidate {
  std::string path;
  std::string why;              ///< "changed in the live tree", "deleted from the live tree"
  bool same_content_possible;   ///< both sides are files or both symlinks: compare them
};

/// `since_ns`: nanoseconds since the epoch. Reads metadata only (as root, never following a
/// symlink; the upper's overlay attributes need root).
std::vector<ConflictCandidate> FindConflictCandidates(int live_fd, int upper_fd, const std::vector<Change>& changes,
                                                      int64_t since_ns);

}  // namespace sandboxd
