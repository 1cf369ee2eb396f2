#pragma once
/// What one commit takes out of a sandbox's change set, built from the review (review.h) and
/// carried out by CommitRunner.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "changes/commit_selection.h"
#include "sandbox/root_changes.h"

namespace sandboxd {

/// What one commit takes: the whole change set, read from the upper as the commit goes
/// (`whole_upper`), or a part of it, streamed (`taken`). Neither is ever held whole, so a change
/// set of a million entries commits in bounded memory.
struct CommitRequest {
  /// The whole change set, each change whole; `renames` holds every rename (Review::Outlook).
  bool whole_upper = false;
  std::map<std::pair<size_t, std::string>, std::string> renames;  ///< {root, added path} → deleted path
  bool force = false;  ///< commit over conflicts
  /// A part of the change set: hands each change taken to `take` in scan order
  /// (commit_selection.h) and returns the renames both of whose halves it took. Called once,
  /// once the commit is journaled.
  using TakenStream = std::function<TakenRenames(const std::function<void(TakenChange&&)>& take)>;
  TakenStream taken;
};

/// What a commit of a part takes, held (Review::Selection, for a caller that wants it at hand):
/// changes in scan order per root (parents before children), and for changes taken hunk by
/// hunk, which hunks.
struct CommitSelection {
  std::vector<RootChanges> changes;
  std::map<std::pair<size_t, std::string>, HunkPick> hunks;  ///< {root, path} → approved hunks and parts
  /// {root, added path} → the deleted path it was renamed from; both halves are in `changes`.
  std::map<std::pair<size_t, std::string>, std::string> renames;
  bool everything = false;  ///< `changes` is the whole change set, each change whole
};

}  // namespace sandboxd
