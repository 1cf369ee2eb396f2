#include "undo_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>
#include <set>

#include "beneath.h"
#include "errors.h"

namespace sandboxd {
namespace {

int64_t CtimeNs(const struct stat& st) { return int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec; }

/// Names in the live directory at `path` that no step of the commit put there.
std::vector<std::string> ForeignEntries(int root, const std::string& path, const std::set<std::string>& made) {
  std::vector<std::string> foreign;
  UniqueFd dir = OpenBeneath(root, path, O_RDONLY | O_DIRECTORY);
  if (!dir) return foreign;
  DIR* listing = fdopendir(dir.get());
  if (!listing) return foreign;
  dir.release();
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string child = path == "." ? name : path + "/" + name;
    if (!made.count(child)) foreign.push_back(child);
  }
  closedir(listing);
  return foreign;
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

std::vector<std::string> FindUndoConflicts(const std::vector<CommitStep>& steps, const std::vector<int>& live_fds,
                                           const std::vector<std::string>& prefixes, int64_t finished_ns,
                                           const PutBackTimes& put_back) {
  std::vector<std::set<std::string>> made(live_fds.size());
  for (const auto& step : steps)
    if (step.action != StepAction::kRemove && step.action != StepAction::kChmod) made.at(step.root).insert(step.path);
  std::vector<std::string> conflicts;
  for (const auto& step : steps) {
    int root = live_fds.at(step.root);
    std::string shown = prefixes.at(step.root) + step.path;
    auto live = StatBeneath(root, step.path);
    int64_t since = AgreedSince(put_back, step.root, step.path, finished_ns);
    switch (step.action) {
      case StepAction::kPlace:
        if (!live) conflicts.push_back(shown + " (deleted since the commit)");
        else if (live->st_ino != step.new_ino) conflicts.push_back(shown + " (replaced since the commit)");
        else if (CtimeNs(*live) >= since) conflicts.push_back(shown + " (changed since the commit)");
        break;
      case StepAction::kRemove:
        if (live) conflicts.push_back(shown + " (created again since the commit removed it)");
        break;
      case StepAction::kMakeDirectory:
        if (!live || !S_ISDIR(live->st_mode)) {
          conflicts.push_back(shown + " (no longer the directory the commit made)");
          break;
        }
        for (const auto& child : ForeignEntries(root, step.path, made[step.root]))
          conflicts.push_back(prefixes.at(step.root) + child + " (added since the commit)");
        break;
      case StepAction::kChmod:
        if (live && (live->st_mode & 07777) != step.new_mode) conflicts.push_back(shown + " (mode changed since the commit)");
        break;
      case StepAction::kMove:
        if (!live) conflicts.push_back(shown + " (deleted since the commit)");
        else if (live->st_ino != step.old_ino) conflicts.push_back(shown + " (replaced since the commit)");
        else if (CtimeNs(*live) >= since) conflicts.push_back(shown + " (changed since the commit)");
        if (StatBeneath(root, step.from)) conflicts.push_back(prefixes.at(step.root) + step.from + " (created again since the commit renamed it)");
        break;
    }
  }
  return conflicts;
}

}  // namespace sandboxd
