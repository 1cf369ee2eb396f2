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
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "beneath.h"
#include "change.h"

namespace sandboxd {

struct ConflictCandidate {
  std::string path;
  std::string why;              ///< "changed in the live tree", "deleted from the live tree", ...
  bool same_content_possible;   ///< both sides are files or both symlinks: compare them
};

/// Whether entries of the upper are copies of live entries that have since gone from the live
/// tree. overlayfs records where a copied-up entry came from as a file handle; one that no
/// longer opens (ESTALE), or opens with no link left (held in memory), is an inode the live tree
/// deleted. One that still has a name may have been moved by the sandbox itself: a job renamed
/// it, and its live name is then a change of the sandbox, which the live tree still holds as
/// the sandbox saw it (its sight; or it has none yet, while the job runs). Any other name it has
/// is not in the live tree where the sandbox saw it: the owner moved it, only a commit's backup
/// holds it, or it is the other name of a hard link the owner unlinked this one from (which
/// moved that name's ctime). When unsure (another error, a handle not understood) it counts as
/// gone: refusing is safe. An entry made by a job (no origin), or a symlink (which cannot be
/// opened to read its origin), is not a copy.
class LiveOrigins {
 public:
  /// `changes`: the root's change set, sorted (the sandbox's own moves are among them);
  /// `sights`: their sights, by path (live_sight.h).
  LiveOrigins(int live_fd, int upper_fd, const std::vector<Change>& changes, const std::map<std::string, std::string>& sights);
  bool Gone(const std::string& path);

 private:
  bool MovedBySandbox(dev_t dev, ino_t ino);

  int live_fd_;
  ParentDirs uppers_;
  const std::vector<Change>& changes_;
  const std::map<std::string, std::string>& sights_;
  std::optional<std::set<std::pair<dev_t, ino_t>>> moved_inodes_;  ///< read when first asked
};

/// `since_ns`: nanoseconds since the epoch. Reads metadata only (as root, never following a
/// symlink; the upper's overlay attributes need root).
/// `sights`: the sights of this root's changes, by path.
std::vector<ConflictCandidate> FindConflictCandidates(int live_fd, int upper_fd, const std::vector<Change>& changes,
                                                      const std::map<std::string, std::string>& sights, int64_t since_ns);

}  // namespace sandboxd
