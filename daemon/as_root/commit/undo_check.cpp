#include "commit/undo_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "base/directory_listing.h"
#include "base/beneath.h"
#include "base/errors.h"

namespace sandboxd {
namespace {

int64_t CtimeNs(const struct stat& st) { return int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec; }

/// The paths of the entries in the live directory at `path`.
std::vector<std::string> LiveEntries(int root, const std::string& path) {
  std::vector<std::string> entries;
  UniqueFd dir = OpenBeneath(root, path, O_RDONLY | O_DIRECTORY);
  if (!dir) return entries;
  for (const auto& name : DirectoryListing::Of(dir.get()).Names()) entries.push_back(path == "." ? name : path + "/" + name);
  return entries;
}

/// The time from which the live entry at `path` must be unchanged: the commit's end, or a later
/// put-back of the path or of a directory above it.
int64_t AgreedSince(const PutBackTimes& put_back, size_t root, const std::string& path, int64_t finished_ns) {
  int64_t since = finished_ns;
  for (std::string at = path;;) {
    if (auto it = put_back.find({root, at}); it != put_back.end()) since = std::max(since, it->second);
    size_t slash = at.rfind('/');
    if (slash == std::string::npos) break;
    at.resize(slash);
  }
  return since;
}

}  // namespace

UndoConflictFinder::UndoConflictFinder(std::vector<int> live_fds, std::vector<std::string> prefixes, int64_t finished_ns,
                                       PutBackTimes put_back, size_t named)
    : live_fds_(std::move(live_fds)),
      prefixes_(std::move(prefixes)),
      finished_ns_(finished_ns),
      put_back_(std::move(put_back)),
      named_(named) {}

void UndoConflictFinder::Found(std::string conflict) {
  if (count_++ < named_) conflicts_.push_back(std::move(conflict));
}

void UndoConflictFinder::Check(const std::vector<CommitStep>& steps) {
  for (const auto& step : steps) {
    int root = live_fds_.at(step.root);
    // What a later step of the commit put there is no stranger in a directory it made.
    if (step.action != StepAction::kRemove && step.action != StepAction::kChmod) unexplained_.erase({step.root, step.path});
    std::string shown = prefixes_.at(step.root) + step.path;
    auto live = StatBeneath(root, step.path);
    int64_t since = AgreedSince(put_back_, step.root, step.path, finished_ns_);
    switch (step.action) {
      case StepAction::kPlace:
        if (!live) Found(shown + " (deleted since the commit)");
        else if (live->st_ino != step.new_ino) Found(shown + " (replaced since the commit)");
        else if (CtimeNs(*live) >= since) Found(shown + " (changed since the commit)");
        break;
      case StepAction::kRemove:
        if (live) Found(shown + " (created again since the commit removed it)");
        break;
      case StepAction::kMakeDirectory:
        if (!live || !S_ISDIR(live->st_mode)) {
          Found(shown + " (no longer the directory the commit made)");
          break;
        }
        for (auto& child : LiveEntries(root, step.path)) unexplained_.insert({step.root, std::move(child)});
        break;
      case StepAction::kChmod:
        if (live && (live->st_mode & 07777) != step.new_mode) Found(shown + " (mode changed since the commit)");
        break;
      case StepAction::kMove:
        if (!live) Found(shown + " (deleted since the commit)");
        else if (live->st_ino != step.old_ino) Found(shown + " (replaced since the commit)");
        else if (CtimeNs(*live) >= since) Found(shown + " (changed since the commit)");
        if (StatBeneath(root, step.from)) Found(prefixes_.at(step.root) + step.from + " (created again since the commit renamed it)");
        break;
    }
  }
}

std::vector<std::string> UndoConflictFinder::Finish() {
  for (const auto& [root, child] : unexplained_) Found(prefixes_.at(root) + child + " (added since the commit)");
  unexplained_.clear();
  return std::move(conflicts_);
}

std::vector<std::string> FindUndoConflicts(const std::vector<CommitStep>& steps, const std::vector<int>& live_fds,
                                           const std::vector<std::string>& prefixes, int64_t finished_ns,
                                           const PutBackTimes& put_back) {
  UndoConflictFinder finder(live_fds, prefixes, finished_ns, put_back);
  finder.Check(steps);
  return finder.Finish();
}

}  // namespace sandboxd
