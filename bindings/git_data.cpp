#include "git_data.h"

#include <array>

namespace sandboxd::api {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

/// Whether `inner` (a path beneath a `.git` directory) is data git keeps for itself, which no
/// git command runs or obeys: the object store, refs and their logs, the index, the state of a
/// commit, merge or rebase under way. The list is closed on purpose: a name git adds later is
/// listed as a file until it is known to be inert.
bool Inert(std::string_view inner) {
  // Files of the git directory itself.
  static constexpr std::array<std::string_view, 22> kFiles = {
      "HEAD",          "ORIG_HEAD",   "FETCH_HEAD",    "MERGE_HEAD", "MERGE_MSG",        "MERGE_MODE", "MERGE_RR",
      "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "BISECT_LOG",     "COMMIT_EDITMSG", "TAG_EDITMSG",
      "SQUASH_MSG",    "index",       "packed-refs",   "description", "shallow",         "gc.pid",     "gc.log",
      "branches"};
  // Directories whose whole content is inert (the object store's alternates are not: below).
  static constexpr std::array<std::string_view, 6> kTrees = {"objects", "refs", "logs", "rebase-merge", "rebase-apply", "sequencer"};
  // Empty directories git makes for what it obeys: the directory is inert, not what comes in it.
  static constexpr std::array<std::string_view, 2> kBareDirs = {"hooks", "info"};
  std::string_view bare = EndsWith(inner, ".lock") ? inner.substr(0, inner.size() - 5) : inner;  // a lock is its file's
  for (auto name : kFiles)
    if (bare == name) return true;
  for (auto name : kBareDirs)
    if (inner == name) return true;
  if (StartsWith(inner, "objects/info/")) return inner == "objects/info/packs";  // alternates lead elsewhere
  for (auto tree : kTrees)
    if (inner == tree || (StartsWith(inner, tree) && inner[tree.size()] == '/')) return true;
  // The samples `git init` writes: git never runs a hook by that name.
  if (StartsWith(inner, "hooks/") && EndsWith(inner, ".sample") && inner.find('/', 6) == std::string_view::npos) return true;
  return false;
}

}  // namespace

std::optional<GitDataPlace> GitDataOf(std::string_view path) {
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    std::string_view component = path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (component == ".git") {
      if (end == std::string_view::npos || end + 1 >= path.size()) return std::nullopt;  // the .git entry itself
      std::string_view inner = path.substr(end + 1);
      if (!Inert(inner)) return std::nullopt;
      return GitDataPlace{std::string(path.substr(0, end)), std::string(inner)};
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return std::nullopt;
}

bool IsGitIndex(std::string_view path) {
  auto place = GitDataOf(path);
  return place && place->inner == "index";
}

std::string WorkTreeOf(std::string_view git_dir) {
  if (git_dir == ".git") return ".";
  return std::string(git_dir.substr(0, git_dir.size() - 5));  // "lib/.git" → "lib"
}

}  // namespace sandboxd::api
