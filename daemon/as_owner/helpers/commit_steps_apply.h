#pragma once
/// Carries out a journaled commit's steps in sandboxd-helper, as the owner: forward (every step
/// brought to its after state, in order) or back (every step brought to its before state, in
/// reverse). Each step first looks at the live tree to see where it stands, so running either
/// direction again after an interruption at any instant is safe. Every path is opened beneath
/// its root without following symlinks; entries move only by rename, within one file system.

#include <vector>

#include "model/commit_step.h"

namespace sandboxd {

struct StepRoot {
  int live_fd = -1;     ///< directory fd of the live root
  int upper_fd = -1;    ///< directory fd of the upper layer (unmounted)
  int removed_fd = -1;  ///< directory fd where removed live entries are kept, as "e<seq>"
};

/// Throws Error naming the path on the first step that cannot be done; kConflict when the live
/// entry is not the one the commit planned for (it changed during the commit). `steps` may be
/// one page of a commit's steps (forward: pages in order; back: pages in reverse order); `sync`
/// (after the last page) puts everything on disk before the daemon records the outcome.
void RollForward(const std::vector<CommitStep>& steps, const std::vector<StepRoot>& roots, bool sync = true);
void RollBack(const std::vector<CommitStep>& steps, const std::vector<StepRoot>& roots, bool sync = true);

}  // namespace sandboxd
