#include "commit_planner.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <set>

#include "beneath.h"
#include "errors.h"

namespace sandboxd {
namespace {

/// The inode number at `path` beneath the root of `dirs`, 0 when nothing is there.
ino_t InodeAt(ParentDirs& dirs, const std::string& path) {
  auto st = StatBeneath(dirs, path);
  return st ? st->st_ino : 0;
}

bool Committable(EntryType type) {
  return type == EntryType::kFile || type == EntryType::kSymlink || type == EntryType::kFifo ||
         type == EntryType::kDirectory;
}

/// A rename: the live entry moves, then takes the permission bits of the sandbox's copy.
void PlanMove(CommitPlan& plan, size_t root, const std::string& to, const std::string& from, const struct stat& source,
              int upper) {
  CommitStep move;
  move.seq = plan.steps.size();
  move.root = root;
  move.path = to;
  move.from = from;
  move.action = StepAction::kMove;
  move.old_ino = source.st_ino;
  plan.steps.push_back(move);
  auto copy = StatBeneath(upper, to);
  if (!copy) throw Error(Code::kFailed, to + " vanished from the sandbox during the commit");
  if (S_ISLNK(copy->st_mode) || (copy->st_mode & 07777) == (source.st_mode & 07777)) return;
  CommitStep chmod;
  chmod.seq = plan.steps.size();
  chmod.root = root;
  chmod.path = to;
  chmod.action = StepAction::kChmod;
  chmod.old_mode = source.st_mode & 07777;
  chmod.new_mode = copy->st_mode & 07777;
  plan.steps.push_back(chmod);
}

}  // namespace

bool IsCommittable(const Change& change) {
  return change.kind == ChangeKind::kDeleted || change.kind == ChangeKind::kModeChanged || Committable(change.new_type);
}

CommitPlan PlanCommit(const std::vector<RootChanges>& changes, const std::vector<int>& live_fds,
                      const std::vector<int>& upper_fds, const std::vector<std::string>& prefixes,
                      const RenameMap& renames) {
  CommitPlan plan;
  // The renames whose live entry is still there move it; their deletions go with the move.
  std::map<std::pair<size_t, std::string>, struct stat> moving;  // {root, added path} → live entry
  std::set<std::pair<size_t, std::string>> moved_away;           // {root, deleted path}
  std::set<std::pair<size_t, std::string>> taken;
  for (const auto& root : changes)
    for (const auto& change : root.changes) taken.insert({root.root, change.path});
  for (const auto& [key, from] : renames) {
    CheckRelativePath(from);
    if (!taken.count(key) || !taken.count({key.first, from})) continue;  // only whole renames move
    if (auto source = StatBeneath(live_fds.at(key.first), from)) {
      moving[key] = *source;
      moved_away.insert({key.first, from});
    }
  }
  for (const auto& root : changes) {
    int upper = upper_fds.at(root.root);
    // Changes come sorted by path: each directory is opened about once for all its entries.
    ParentDirs live(live_fds.at(root.root)), uppers(upper);
    for (const auto& change : root.changes) {
      CheckRelativePath(change.path);
      if (moved_away.count({root.root, change.path})) continue;
      if (auto move = moving.find({root.root, change.path}); move != moving.end()) {
        PlanMove(plan, root.root, change.path, renames.at(move->first), move->second, upper);
        continue;
      }
      CommitStep step;
      step.seq = plan.steps.size();
      step.root = root.root;
      step.path = change.path;
      step.old_mode = change.old_mode;
      step.new_mode = change.new_mode;
      switch (change.kind) {
        case ChangeKind::kDeleted:
          step.action = StepAction::kRemove;
          step.old_ino = InodeAt(live, change.path);
          if (step.old_ino == 0) continue;  // already gone from the live tree
          break;
        case ChangeKind::kModeChanged:
          step.action = StepAction::kChmod;
          break;
        case ChangeKind::kAdded:
        case ChangeKind::kModified:
        case ChangeKind::kTypeChanged:
          if (!Committable(change.new_type)) {
            plan.skipped.push_back("skipped " + prefixes.at(root.root) + change.path +
                                   ": sockets and device nodes are not committed");
            continue;
          }
          step.old_ino = InodeAt(live, change.path);
          if (change.new_type == EntryType::kDirectory) {
            step.action = StepAction::kMakeDirectory;
          } else {
            step.action = StepAction::kPlace;
            step.new_ino = InodeAt(uppers, change.path);
            if (step.new_ino == 0) throw Error(Code::kFailed, change.path + " vanished from the sandbox during the commit");
          }
          break;
      }
      plan.steps.push_back(std::move(step));
    }
  }
  return plan;
}

}  // namespace sandboxd
