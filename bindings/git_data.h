#pragma once
/// A repository's own data inside a sandbox's root (`.git` of a work tree) is shown and decided as
/// git, not as files: a job's `git commit` writes objects, refs, logs and the index at once, and
/// half of them in the live tree is a broken repository (a ref naming an object that never came;
/// an index that stages the reverse of the commit). So the data git keeps for itself is one unit:
/// `changes` folds it into a line ("git: 2 commits on main (1a2b3c4..5d6e7f8), index"), approve,
/// reject and commit take it whole or not at all. What git *obeys* is never folded: `config`
/// (core.fsmonitor, core.hooksPath, aliases run programs), `hooks/` (run on the owner's next git
/// command), `info/` (ignores and attributes), alternates, other work trees and submodules'
/// repositories: each is listed and decided as the file it is, so no program can hide in a fold.
/// Shared by sandboxd (the decisions and the commit) and sandboxctl (the listing).

#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::api {

/// Where a path lies in a repository's data.
struct GitDataPlace {
  std::string git_dir;   ///< the repository's ".git" directory, as the path names it (".git", "lib/.git")
  std::string inner;     ///< the rest, beneath it ("refs/heads/main")
};

/// The repository whose inert data `path` (relative to a root, "/"-separated, no "./") is, by
/// the first ".git" component on its way: nullopt for a path outside every `.git` directory,
/// for the `.git` entry itself (it may be a file naming another git directory) and for what git
/// obeys (see above). Anything not known to be inert is not.
std::optional<GitDataPlace> GitDataOf(std::string_view path);

/// Whether `path` is a repository's index (`.git/index`, `lib/.git/index`).
bool IsGitIndex(std::string_view path);

/// The work tree `git_dir` belongs to, as `changes` names it: "." for ".git", "lib" for "lib/.git".
std::string WorkTreeOf(std::string_view git_dir);

}  // namespace sandboxd::api
