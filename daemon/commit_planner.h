#pragma once
/// Turns a sandbox's change set into the steps of a journaled commit, reading (as root, never
/// through a symlink) the inode numbers of the live entries it replaces and of the upper
/// entries that go live. Sockets and device nodes are not committed: they are reported.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "commit_step.h"
#include "sandbox.h"

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

/// `live_fds[i]` and `upper_fds[i]` are directory fds of root i. Paths in `skipped` carry the
/// root prefix of multi-root sandboxes. Each of `renames` is one move of the live entry (plus a
/// mode change when the sandbox's copy has other permission bits), not a placement and a
/// removal; should the live entry be gone already, the sandbox's copy is placed instead.
CommitPlan PlanCommit(const std::vector<RootChanges>& changes, const std::vector<int>& live_fds,
                      const std::vector<int>& upper_fds, const std::vector<std::string>& prefixes,
                      const RenameMap& renames = {});

}  // namespace sandboxd
