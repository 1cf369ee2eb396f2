#include "commit/commit_planner.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <set>

#include "base/beneath.h"
#include "base/errors.h"

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

}  // namespace

bool IsCommittable(const Change& change) {
  return change.kind == ChangeKind::kDeleted || change.kind == ChangeKind::kModeChanged || Committable(change.new_type);
}

CommitPlanner::CommitPlanner(std::vector<int> live_fds, std::vector<int> upper_fds, std::vector<std::string> prefixes,
                             const RenameMap& renames)
    : live_fds_(std::move(live_fds)), upper_fds_(std::move(upper_fds)), prefixes_(std::move(prefixes)), renames_(renames) {
  // The renames whose live entry is still there move it; their deletions go with the move.
  for (const auto& [key, from] : renames_) {
    CheckRelativePath(from);
    if (auto source = StatBeneath(live_fds_.at(key.first), from)) {
      moving_[key] = *source;
      moved_away_.insert({key.first, from});
    }
  }
}

void CommitPlanner::Push(CommitStep step, std::vector<CommitStep>& steps) {
  step.seq = next_seq_++;
  steps.push_back(std::move(step));
}

/// A rename: the live entry moves, then takes the permission bits of the sandbox's copy.
void CommitPlanner::PlanMove(size_t root, const std::string& to, const std::string& from, const struct stat& source,
                             std::vector<CommitStep>& steps) {
  CommitStep move;
  move.root = root;
  move.path = to;
  move.from = from;
  move.action = StepAction::kMove;
  move.old_ino = source.st_ino;
  Push(std::move(move), steps);
  auto copy = StatBeneath(upper_fds_.at(root), to);
  if (!copy) throw Error(Code::kFailed, to + " vanished from the sandbox during the commit");
  if (S_ISLNK(copy->st_mode) || (copy->st_mode & 07777) == (source.st_mode & 07777)) return;
  CommitStep chmod;
  chmod.root = root;
  chmod.path = to;
  chmod.action = StepAction::kChmod;
  chmod.old_mode = source.st_mode & 07777;
  chmod.new_mode = copy->st_mode & 07777;
  Push(std::move(chmod), steps);
}

void CommitPlanner::Plan(size_t root, const Change& change, std::vector<CommitStep>& steps, const UpperEntry* upper) {
  CheckRelativePath(change.path);
  if (moved_away_.count({root, change.path})) return;
  if (auto move = moving_.find({root, change.path}); move != moving_.end()) {
    PlanMove(root, change.path, renames_.at(move->first), move->second, steps);
    return;
  }
  ParentDirs& live = lives_.try_emplace(root, live_fds_.at(root)).first->second;
  CommitStep step;
  step.root = root;
  step.path = change.path;
  step.old_mode = change.old_mode;
  step.new_mode = change.new_mode;
  switch (change.kind) {
    case ChangeKind::kDeleted:
      step.action = StepAction::kRemove;
      step.old_ino = InodeAt(live, change.path);
      if (step.old_ino == 0) return;  // already gone from the live tree
      break;
    case ChangeKind::kModeChanged:
      step.action = StepAction::kChmod;
      // Its chmod (and an undo's, back) moves the live inode's ctime: InodesNamedBy tells the
      // decisions about it that the work did, not the owner.
      step.old_ino = InodeAt(live, change.path);
      break;
    case ChangeKind::kAdded:
    case ChangeKind::kModified:
    case ChangeKind::kTypeChanged:
      if (!Committable(change.new_type)) {
        skipped_.push_back("skipped " + prefixes_.at(root) + change.path + ": sockets and device nodes are not committed");
        return;
      }
      step.old_ino = InodeAt(live, change.path);
      if (change.new_type == EntryType::kDirectory) {
        step.action = StepAction::kMakeDirectory;
      } else {
        step.action = StepAction::kPlace;
        UpperEntry seen;
        if (upper && upper->ino != 0) {
          seen = *upper;
        } else if (auto st = StatBeneath(uppers_.try_emplace(root, upper_fds_.at(root)).first->second, change.path)) {
          seen = {0, st->st_ino, st->st_nlink};
        } else {
          throw Error(Code::kFailed, change.path + " vanished from the sandbox during the commit");
        }
        step.new_ino = seen.ino;
        if (seen.nlink > 1) {
          multi_linked_places_.resize(next_seq_ + 1);
          multi_linked_places_[next_seq_] = true;
        }
      }
      break;
  }
  Push(std::move(step), steps);
}

CommitPlan PlanCommit(const std::vector<RootChanges>& changes, const std::vector<int>& live_fds,
                      const std::vector<int>& upper_fds, const std::vector<std::string>& prefixes,
                      const RenameMap& renames) {
  // Only whole renames move: both halves taken.
  std::set<std::pair<size_t, std::string>> taken;
  for (const auto& root : changes)
    for (const auto& change : root.changes) taken.insert({root.root, change.path});
  RenameMap whole;
  for (const auto& [key, from] : renames)
    if (taken.count(key) && taken.count({key.first, from})) whole.emplace(key, from);
  CommitPlanner planner(live_fds, upper_fds, prefixes, whole);
  CommitPlan plan;
  for (const auto& root : changes)
    for (const auto& change : root.changes) planner.Plan(root.root, change, plan.steps);
  plan.skipped = std::move(planner.skipped());
  return plan;
}

}  // namespace sandboxd
