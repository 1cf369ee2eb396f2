#pragma once
/// Which changed paths git ignores, for roots that lie in a git work tree: `changes`, `diff`
/// and `review` fold them into one counted line unless --ignored, and a commit that takes any
/// says how many, so that nothing reaches the live tree unseen. git itself answers
/// (`git check-ignore`, run as the user in the live root): every .gitignore on the way, the
/// repository's info/exclude and the user's global excludes count, and a tracked file is
/// never ignored, exactly as `git status` sees them. Without git, or outside a work tree,
/// nothing is ignored. Nothing is asked until a path is: a command over an empty change set
/// pays nothing for it, and a root with no ".git" above it starts no git.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "context.h"

namespace sandboxctl {

class GitIgnored {
 public:
  /// For a sandbox with these roots (absolute paths, in the sandbox's order).
  explicit GitIgnored(const std::vector<std::string>& roots);
  /// For the sandbox at `sandbox_path` (its roots asked of sandboxd when first needed).
  static GitIgnored OfSandbox(Context& ctx, const std::string& sandbox_path);

  /// Whether any root lies in a git work tree (else nothing is ever ignored).
  bool any() const;

  /// A changed path as `changes` shows it (a wire name, with "N/" before it when the sandbox has
  /// several roots), and whether it is a directory in the sandbox (a pattern like "build/"
  /// matches directories only, and the live tree may have none there for git to look at).
  struct Path {
    std::string shown;
    bool directory = false;
  };
  /// Of `paths`, those git ignores (as shown). Asks git once per root that has any.
  std::set<std::string> Of(const std::vector<Path>& paths) const;

 private:
  explicit GitIgnored(std::function<std::vector<std::string>()> roots) : read_roots_(std::move(roots)) {}
  /// Reads the roots and asks which lie in a work tree, once.
  void Resolve() const;

  std::function<std::vector<std::string>()> read_roots_;
  // What Resolve learnt (const callers ask; the answer is read once).
  mutable bool resolved_ = false;
  mutable std::vector<std::string> roots_;
  mutable std::vector<bool> in_work_tree_;
  mutable bool any_ = false;
};

/// `git ARGS...` run in `dir` as the user, with `input` on its stdin: its stdout; `ok` says
/// whether it exited 0 or 1 (false for anything else, or when there is no git).
std::string RunGit(const std::string& dir, const std::vector<std::string>& args, const std::string& input, bool& ok);

}  // namespace sandboxctl
