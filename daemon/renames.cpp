#include "renames.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <map>
#include <optional>
#include <set>

#include "beneath.h"
#include "fd.h"
#include "same_content.h"

namespace sandboxd {
namespace {

bool MayBeRenamed(EntryType type) { return type == EntryType::kFile || type == EntryType::kSymlink; }

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::optional<struct stat> StatBeneath(int root, const std::string& path) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(root, parent_path, O_PATH | O_DIRECTORY);
  struct stat st;
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
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
  std::set<std::string> taken;
  for (const auto& [to, froms] : candidates) {
    for (const auto& from : froms) {
      if (taken.count(from) || !SameContent(live_fd, from, upper_fd, to)) continue;
      taken.insert(from);
      renames.push_back({from, to});
      break;
    }
  }
  return renames;
}

}  // namespace sandboxd
