#pragma once
/// What one commit takes out of a sandbox's change set. Pure data, built from the review
/// (review.h) and carried out by CommitRunner.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commit_selection.h"
#include "sandbox.h"

namespace sandboxd {

/// What one commit takes: changes in scan order per root (parents before children), and for
/// changes taken hunk by hunk, which hunks.
struct CommitRequest {
  std::vector<RootChanges> changes;
  std::map<std::pair<size_t, std::string>, std::set<int>> hunks;  ///< {root, path} → approved hunks
  /// {root, added path} → the deleted path it was renamed from; both halves are in `changes`.
  std::map<std::pair<size_t, std::string>, std::string> renames;
  bool everything = false;  ///< `changes` is the whole change set, each change whole
  /// The whole change set, each change whole, read from the upper as the commit goes: `changes`
  /// is empty and `renames` holds every rename (Review::Outlook). Never held whole, so a change
  /// set of a million entries commits in bounded memory.
  bool whole_upper = false;
  bool force = false;       ///< commit over conflicts
  /// A part of the change set, streamed: hands each change taken to `take` in scan order
  /// (commit_selection.h) and returns the renames both of whose halves it took. Called once,
  /// once the commit is journaled; `changes` and `hunks` are then unused. What a partial commit
  /// of a million changes takes is never held whole.
  using TakenStream = std::function<TakenRenames(const std::function<void(TakenChange&&)>& take)>;
  TakenStream taken;
};

}  // namespace sandboxd
