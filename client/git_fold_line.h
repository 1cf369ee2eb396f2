#pragma once
/// The line `changes` folds a repository's own data into (git_fold.h), made from what the
/// change set holds of it and what the daemon tells of its history: pure, so tests read it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sandboxctl {

/// What the daemon tells of a repository's history (Sandbox.GetGitSummary).
struct GitHistory {
  std::string branch, was_branch, from, to, index;
  bool new_branch = false;
  int64_t ahead = -1, behind = -1;
  bool known = false;  ///< false: the daemon could not say (only the files are counted)
};

/// One repository's data as the change set holds it.
struct GitFolded {
  std::string git_dir;  ///< as `changes` names it: ".git", "lib/.git", "1/.git"
  size_t entries = 0;  ///< its changes, directories included (what is decided)
  size_t files = 0;    ///< of them, not directories (what is counted for people)
  size_t approved = 0, rejected = 0;
  size_t other_refs = 0;      ///< refs changed beneath refs/ (and packed-refs) besides HEAD's branch
  bool index_changed = false;
  std::string conflict;       ///< "PATH: why" of the first conflict among them
  std::vector<std::string> ref_paths;  ///< changed refs, relative to the git directory
};

/// The line `changes` shows for `folded` with `history` (pure, for tests).
std::string GitFoldLine(const GitFolded& folded, const GitHistory& history);

}  // namespace sandboxctl
