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
#include <utility>
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

  /// A change's paths and what it has at them, as the daemon lists it ("" for a side that is
  /// not there; a rename's other path).
  struct Sides {
    std::string_view path, old_type, new_type, renamed_from, renamed_to;
    template <class Change>
    static Sides Of(const Change& change) {
      return {change.path, change.old_type, change.new_type, change.renamed_from, change.renamed_to};
    }
  };
  /// Of `changes`, whether git ignores each: a change is folded only when git ignores every
  /// side of it, each asked as what it is: its path as it was live and as it is in the sandbox
  /// (a type change has both: "docs/" ignores a directory, never the symlink that took its
  /// place, nor does "build/" hide the file a directory replaced), and a rename's other path.
  /// A change with no side named is not folded.
  std::vector<bool> OfChanges(const std::vector<Sides>& changes) const;

 private:
  explicit GitIgnored(std::function<std::vector<std::string>()> roots) : read_roots_(std::move(roots)) {}
  /// One question for git: a changed path as `changes` shows it (a wire name, with "N/" before
  /// it when the sandbox has several roots), asked as a directory or as none (a pattern like
  /// "build/" matches directories only, and the live tree may have none there for git to see).
  struct Path {
    std::string shown;
    bool directory = false;
  };
  /// Of `paths`, the questions git answers "ignored": (the path as shown, asked as a directory).
  /// Asks git once per root that has any. git answers for what the live tree holds: a path
  /// asked as no directory where the live tree has a directory cannot be asked (git would
  /// look at the directory), and is not ignored.
  std::set<std::pair<std::string, bool>> Ask(const std::vector<Path>& paths) const;
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
