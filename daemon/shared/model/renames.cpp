#include "model/renames.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/beneath.h"
#include "unique_fd.h"
#include "model/same_content.h"

namespace sandboxd {

bool MayBeRenamed(EntryType type) { return type == EntryType::kFile || type == EntryType::kSymlink; }

namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

RenameCandidates MatchRenameCandidates(const std::vector<RenameSide>& deleted, const std::vector<RenameSide>& added) {
  std::map<std::pair<EntryType, off_t>, std::vector<const RenameSide*>> by_kind_and_size;
  for (const auto& side : deleted)
    if (MayBeRenamed(side.type) && side.size > 0) by_kind_and_size[{side.type, side.size}].push_back(&side);
  RenameCandidates candidates;
  for (const auto& side : added) {
    if (!MayBeRenamed(side.type) || side.size <= 0) continue;
    auto it = by_kind_and_size.find({side.type, side.size});
    if (it == by_kind_and_size.end()) continue;
    // A file moved to another directory usually keeps its name: those are tried first.
    std::vector<std::string> froms;
    std::string name = BaseName(side.path);
    for (const RenameSide* from : it->second)
      if (BaseName(from->path) == name && froms.size() < kMaxRenameTries) froms.push_back(from->path);
    for (const RenameSide* from : it->second)
      if (BaseName(from->path) != name && froms.size() < kMaxRenameTries) froms.push_back(from->path);
    candidates.push_back({side.path, std::move(froms)});
  }
  return candidates;
}

bool MayHaveRenames(const std::vector<Change>& changes) {
  bool deleted = false, added = false;
  for (const auto& change : changes) {
    deleted |= change.kind == ChangeKind::kDeleted && MayBeRenamed(change.old_type);
    added |= change.kind == ChangeKind::kAdded && MayBeRenamed(change.new_type);
  }
  return deleted && added;
}

RenameCandidates ProposeRenames(int live_fd, int upper_fd, const std::vector<Change>& changes) {
  if (!MayHaveRenames(changes)) return {};
  std::vector<RenameSide> deleted, added;
  for (const auto& change : changes) {
    if (change.kind == ChangeKind::kDeleted && MayBeRenamed(change.old_type)) {
      // Only a deletion of its own (a whiteout): an entry hidden by a directory the sandbox
      // replaced goes with that directory and cannot move on its own.
      auto upper = StatBeneath(upper_fd, change.path);
      if (!upper || !S_ISCHR(upper->st_mode) || upper->st_rdev != makedev(0, 0)) continue;
      if (auto live = StatBeneath(live_fd, change.path))
        deleted.push_back({change.path, EntryTypeFromMode(live->st_mode), live->st_size});
    } else if (change.kind == ChangeKind::kAdded && MayBeRenamed(change.new_type)) {
      if (auto upper = StatBeneath(upper_fd, change.path))
        added.push_back({change.path, EntryTypeFromMode(upper->st_mode), upper->st_size});
    }
  }
  return MatchRenameCandidates(deleted, added);
}

std::vector<Rename> ConfirmRenames(int live_fd, int upper_fd, const RenameCandidates& candidates) {
  std::vector<Rename> renames;
  std::set<std::string> taken_from, taken_to;
  // Two rounds: a file that kept its name is paired first, so that a copy under another name
  // cannot take its original away from it.
  for (bool same_name : {true, false}) {
    for (const auto& [to, froms] : candidates) {
      if (taken_to.count(to)) continue;
      for (const auto& from : froms) {
        if ((BaseName(from) == BaseName(to)) != same_name || taken_from.count(from)) continue;
        if (!SameContent(live_fd, from, upper_fd, to)) continue;
        taken_from.insert(from);
        taken_to.insert(to);
        renames.push_back({from, to});
        break;
      }
    }
  }
  // In the order of the added paths, as the candidates came.
  std::map<std::string, size_t> order;
  for (size_t i = 0; i < candidates.size(); ++i) order[candidates[i].first] = i;
  std::sort(renames.begin(), renames.end(), [&](const Rename& a, const Rename& b) { return order[a.to] < order[b.to]; });
  return renames;
}

}  // namespace sandboxd
