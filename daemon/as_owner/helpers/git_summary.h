#pragma once
/// What a sandbox did to a repository's history, read as its owner from the two layers (the
/// sandbox's view is the upper where it holds an entry, else the live tree): the branch its HEAD
/// is on and where it was, how many commits it moved by, and whether its index stages anything
/// other than the live one. `changes` folds a repository's data into one line with it
/// (git_data.h): "git: 2 commits on main (1a2b3c4..5d6e7f8), index". Read with libgit2 in
/// sandboxd-text-helper: objects from both layers' object stores (never their alternates),
/// refs and HEAD read as files, every file opened beneath its layer without following a symlink.

#include <cstdint>
#include <string>

namespace sandboxd {

struct GitSummary {
  std::string branch;      ///< the sandbox's HEAD's branch ("main"), "" when detached
  std::string was_branch;  ///< the live HEAD's branch, "" when detached or unreadable
  std::string from;        ///< the live commit of that branch (or the live HEAD's, for a new branch); "" unknown
  std::string to;          ///< the sandbox's commit there; "" unknown
  bool new_branch = false; ///< the branch is not in the live repository
  int64_t ahead = -1;      ///< commits in `to` and not in `from` (-1: unknown, objects missing)
  int64_t behind = -1;     ///< commits in `from` and not in `to`
  /// What the sandbox's index stages against the live one's: "changed", "same" (only its stat
  /// cache differs: a git status refreshed it), "" (no index in the sandbox's layer, or unreadable).
  std::string index;
};

/// The summary of the repository at `git_dir` (".git", "lib/.git") of the root whose live tree
/// is `live_fd` and upper layer `upper_fd`.
GitSummary SummarizeGit(int live_fd, int upper_fd, const std::string& git_dir);

}  // namespace sandboxd
