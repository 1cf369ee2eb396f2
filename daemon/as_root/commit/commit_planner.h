#pragma once
/// Turns a sandbox's change set into the steps of a journaled commit, reading (as root, never
/// through a symlink) the inode numbers of the live entries it replaces and of the upper
/// entries that go live. Sockets and device nodes are not committed: they are reported.

#include <sys/stat.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/beneath.h"
#include "model/commit_step.h"
#include "sandbox/changeset_scanner.h"
#include "sandbox/root_changes.h"

namespace sandboxd {

struct CommitPlan {
  std::vector<CommitStep> steps;
  std::vector<std::string> skipped;  ///< "skipped P: ..." messages
};

/// False for a change that puts a socket or a device node in place: those are reported, not
/// committed.
bool IsCommittable(const Change& change);

/// {root, added path} → the deleted path it is a rename of (commit_request.h).
using RenameMap = std::map<std::pair<size_t, std::string>, std::string>;

/// Plans a commit's steps a change at a time, for a change set streamed in scan order (per root,
/// parents before children): it holds the steps of the change at hand only, never the commit's.
/// `renames` ({root, added path} → deleted path) must be of changes whose halves are both taken.
class CommitPlanner {
 public:
  CommitPlanner(std::vector<int> live_fds, std::vector<int> upper_fds, std::vector<std::string> prefixes,
                const RenameMap& renames);
  /// Appends the steps of `change` of root `root` to `steps` (none for a deletion already gone
  /// live, the deleted half of a moved rename, or a socket or device node, which is reported in
  /// skipped()). `upper`: the change's upper entry as a scan just saw it (else it is looked at
  /// here). Throws Error naming the path.
  void Plan(size_t root, const Change& change, std::vector<CommitStep>& steps, const UpperEntry* upper = nullptr);
  /// Steps planned so far: the next one's seq.
  size_t planned() const { return next_seq_; }
  /// Whether place step `seq` puts live an entry with more than one link (a name of the job's
  /// making, or the overlay's index entry of a copy-up). Where the index covers the upper only
  /// such an entry can carry overlayfs's marks (Sandbox::IndexCoversUpper). A bit a step.
  bool PlacesMultiLinked(size_t seq) const { return seq < multi_linked_places_.size() && multi_linked_places_[seq]; }
  bool AnyPlaceMultiLinked() const { return !multi_linked_places_.empty(); }
  std::vector<std::string>& skipped() { return skipped_; }

 private:
  void Push(CommitStep step, std::vector<CommitStep>& steps);
  void PlanMove(size_t root, const std::string& to, const std::string& from, const struct stat& source,
                std::vector<CommitStep>& steps);

  std::vector<int> live_fds_, upper_fds_;
  std::vector<std::string> prefixes_;
  const RenameMap& renames_;
  std::map<std::pair<size_t, std::string>, struct stat> moving_;  ///< {root, added path} → live entry
  std::set<std::pair<size_t, std::string>> moved_away_;           ///< {root, deleted path}
  std::map<size_t, ParentDirs> lives_, uppers_;                   ///< per root, each directory opened about once
  size_t next_seq_ = 0;
  std::vector<bool> multi_linked_places_;  ///< by seq (PlacesMultiLinked)
  std::vector<std::string> skipped_;
};

/// `live_fds[i]` and `upper_fds[i]` are directory fds of root i. Paths in `skipped` carry the
/// root prefix of multi-root sandboxes. Each of `renames` is one move of the live entry (plus a
/// mode change when the sandbox's copy has other permission bits), not a placement and a
/// removal; should the live entry be gone already, the sandbox's copy is placed instead.
CommitPlan PlanCommit(const std::vector<RootChanges>& changes, const std::vector<int>& live_fds,
                      const std::vector<int>& upper_fds, const std::vector<std::string>& prefixes,
                      const RenameMap& renames = {});

}  // namespace sandboxd
