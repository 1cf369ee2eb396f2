#pragma once
/// From --include / --exclude patterns to selectors. The daemon knows no patterns, so sandboxctl
/// reads the change set and names the passing changes by path. A PATH selector names the change
/// at PATH and every change beneath it, so a passing directory with a change beneath it that
/// does not pass cannot be named at all and is left out: patterns never widen a selection.
/// Pure: the verbs read the change set and send the selectors.

#include <functional>
#include <string>
#include <vector>

#include "path_patterns.h"
#include "selector.h"

namespace sandboxctl {

/// What choosing selectors needs to know of a change.
struct ChangeEntry {
  std::string path;    ///< as `changes` shows it
  std::string review;  ///< pending, approved, rejected or partial
  /// The other half of a rename, "" for none. The daemon takes both halves when either is
  /// named, so a rename passes the patterns only when both of its paths do.
  std::string renamed_with = {};
  /// Left out whatever the patterns say (a path git ignores, folded away): never named, nor
  /// is a directory above it.
  bool left_out = false;
};

/// Which reviews a verb acts on, the way the daemon picks them among the changes a selector
/// names (commit: approved ones); empty: every change.
using ReviewFilter = std::function<bool(const std::string& review)>;

/// Selectors naming exactly the changes that `selectors` name (every change when there are
/// none), that pass `patterns` and that `acts_on` accepts, one per change or per directory
/// whose every change beneath is among them. A hunk or part selector stays when its path passes;
/// a selector that names no change stays as typed, for the daemon to refuse by name.
/// Empty when nothing is left.
std::vector<sandboxd::api::Selector> NarrowSelectors(const std::vector<ChangeEntry>& changes,
                                                     const std::vector<sandboxd::api::Selector>& selectors, const PathPatterns& patterns,
                                                     const ReviewFilter& acts_on = {});

/// The reviews a commit takes among the changes it names: approved and partly approved ones,
/// and with --all (`all`) pending ones, which it approves first.
bool CommitTakes(const std::string& review, bool all);

}  // namespace sandboxctl
