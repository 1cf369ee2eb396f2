#include "commit_planner.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "beneath.h"
#include "errors.h"

namespace sandboxd {
namespace {

/// The inode number at `path` beneath `root`, 0 when nothing is there (or its parent is not a
/// plain directory, in which case the commit will refuse when it gets there).
ino_t InodeAt(int root, const std::string& path) {
  if (path == ".") {
    struct stat st;
    if (fstat(root, &st) != 0) ThrowErrno("cannot stat a root");
    return st.st_ino;
  }
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(root, parent_path, O_PATH | O_DIRECTORY);
  if (!parent) return 0;
  struct stat st;
  if (fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return 0;
    ThrowErrno("cannot stat " + path);
  }
  return st.st_ino;
}

bool Committable(EntryType type) {
  return type == EntryType::kFile || type == EntryType::kSymlink || type == EntryType::kFifo ||
         type == EntryType::kDirectory;
}

}  // namespace

bool IsCommittable(const Change& change) {
  return change.kind == ChangeKind::kDeleted || change.kind == ChangeKind::kModeChanged || Committable(change.new_type);
}

CommitPlan PlanCommit(const std::vector<RootChanges>& changes, const std::vector<int>& live_fds,
                      const std::vector<int>& upper_fds, const std::vector<std::string>& prefixes) {
  CommitPlan plan;
  for (const auto& root : changes) {
    int live = live_fds.at(root.root), upper = upper_fds.at(root.root);
    for (const auto& change : root.changes) {
      CheckRelativePath(change.path);
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
            step.new_ino = InodeAt(upper, change.path);
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
