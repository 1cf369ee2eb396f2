#pragma once
/// `changes` (and the MCP server's changes tool) show a repository's own data as git, not as
/// files (git_data.h): what a job's `git commit` wrote beneath `.git` becomes one line per
/// repository, "git: 2 commits on main (1a2b3c4..5d6e7f8), index (57 files)", with the decision
/// the files carry and the first conflict among them. What git runs or obeys there (config,
/// hooks, info) is never taken in: it is listed as the file it is. `changes --git` lists
/// everything as files.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "context.h"
#include "git_fold_line.h"
#include "listed_change.h"

namespace sandboxctl {

class GitFold {
 public:
  /// `root_count` is asked when first needed: paths carry "N/" in a sandbox of several roots.
  explicit GitFold(std::function<size_t()> root_count) : root_count_(std::move(root_count)) {}
  /// The repository (its ".git" as `changes` names it) whose own data `change` is, if it is.
  std::optional<std::string> GitDirOf(const ListedChange& change);
  /// Takes `change` into its repository's line when it is a repository's own data: that
  /// repository's ".git" as `changes` names it; nothing for any other change.
  std::optional<std::string> Take(const ListedChange& change);
  bool empty() const { return folded_.empty(); }
  /// One line per repository, in the order met (each history asked of the daemon in one call;
  /// a daemon that cannot tell gets the files counted).
  std::vector<std::string> Lines(Context& ctx, const std::string& sandbox_path) const;
  /// The repositories taken in, in the order of Lines.
  std::vector<std::string> GitDirs() const;

 private:
  std::function<size_t()> root_count_;
  std::optional<size_t> roots_;
  std::vector<GitFolded> folded_;
};

}  // namespace sandboxctl
