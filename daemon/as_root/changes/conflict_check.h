#pragma once
/// Which changes meet a live entry the sandbox did not see (DESIGN: a conflict is a change of the
/// live tree that the sandbox did not see). A change with a sight (live_sight.h) conflicts when
/// its live entry is no longer that sight, or was never seen ("?"). A change without one (made
/// by a job the daemon did not see end) falls back to the older rule: its live entry changed
/// since the sandbox last agreed with the live tree (its creation, or its last commit).
/// "Changed" is read from the entry's ctime,
/// which every write, chmod, chown, rename into place or replacement moves forward and which no
/// tool can set back (unlike mtime: cp -p, tar and touch -d set it at will). Directories are
/// not compared by ctime (adding a file to a directory moves its ctime): only a live directory
/// that is no longer a directory conflicts. A live entry the sandbox had copied up and that
/// was deleted from the live tree since is a conflict too. Whether a changed file holds what the
/// sandbox holds anyway (no conflict then) needs the owner's rights and is decided by the caller.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <sys/types.h>
#include <utility>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "model/change.h"

namespace sandboxd {

struct ConflictCandidate {
  std::string path;
  std::string why;              ///< "changed in the live tree", "deleted from the live tree", ...
  bool same_content_possible;   ///< both sides are files or both symlinks: compare them
};

/// `since_ns`: nanoseconds since the epoch. Reads metadata only (as root, never following a
/// symlink; the upper's overlay attributes need root).
/// `sights`: the sights of this root's changes, by path.
/// The live inodes that the sandbox's own changes left where it saw them: a copy whose origin
/// still has a name is gone from the live tree unless it is one of these (the sandbox moved it).
/// Asked only then (rare), it may read the whole change set.
using Inode = std::pair<dev_t, ino_t>;
using MovedInodes = std::function<std::set<Inode>()>;

/// `changes` may be a part of the change set (a page of a stream, in path order) with
/// `moved` computed from the whole; without `moved`, `changes` and `sights` are the whole.
std::vector<ConflictCandidate> FindConflictCandidates(const UserCredentials& owner, int live_fd, int upper_fd,
                                                      const std::vector<Change>& changes,
                                                      const std::map<std::string, std::string>& sights, int64_t since_ns,
                                                      const MovedInodes& moved = {});

/// MovedInodes of one change with its sight (nullptr: none), fed the change set in turn.
void AddMovedInode(const UserCredentials& owner, int live_fd, const Change& change, const std::string* sight, std::set<Inode>& moved);

}  // namespace sandboxd
