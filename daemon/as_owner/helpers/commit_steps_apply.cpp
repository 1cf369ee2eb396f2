#include "helpers/commit_steps_apply.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

std::optional<struct stat> Lstat(int dirfd, const std::string& name, const std::string& shown) {
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return st;
  if (errno == ENOENT) return std::nullopt;
  ThrowErrno("cannot stat " + shown);
}

void RenameEntry(int from_dir, const std::string& from, int to_dir, const std::string& to, unsigned flags,
                 const std::string& what) {
  if (renameat2(from_dir, from.c_str(), to_dir, to.c_str(), flags) != 0) ThrowErrno("cannot " + what);
}

/// The permission bits of the entry, never through a symlink (which has none of its own).
void SetMode(int parent, const std::string& name, mode_t mode, const std::string& shown) {
  UniqueFd entry(openat(parent, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!entry) ThrowErrno("cannot open live " + shown);
  struct stat st;
  if (fstat(entry.get(), &st) != 0) ThrowErrno("cannot stat live " + shown);
  if (S_ISLNK(st.st_mode) || (st.st_mode & 07777) == mode) return;
  std::string proc = "/proc/self/fd/" + std::to_string(entry.get());
  if (chmod(proc.c_str(), mode) != 0) ThrowErrno("cannot change the mode of live " + shown);
}

/// syncfs needs a real descriptor, not the O_PATH ones the roots come as.
void SyncFileSystems(const std::vector<StepRoot>& roots) {
  for (const auto& root : roots) {
    UniqueFd dir(openat(root.live_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir || syncfs(dir.get()) != 0) ThrowErrno("cannot sync the live file system");
  }
}

/// The live entry is not the one the commit planned for: someone changed it meanwhile.
Error ChangedDuringCommit(const std::string& path) {
  return Error(Code::kConflict, "live " + path + " changed while the commit was under way; the commit was taken back");
}
Error ChangedSinceCommit(const std::string& path) {
  return Error(Code::kConflict, "live " + path + " changed since the commit; cannot take the commit back over it");
}

/// The live directory a move comes from (or goes back to) cannot be opened.
Error SourceUnreachable(const CommitStep& step, int error) {
  std::string parent = SplitParent(step.from).first;
  if (error == ELOOP || error == EXDEV || error == ENOTDIR)
    return Error(Code::kInvalidPath, "live path " + parent + " of " + step.from +
                                         " is a symlink or not a directory; refusing to commit through it");
  if (error == ENOENT) return Error(Code::kConflict, "live directory " + parent + " of " + step.from + " is gone");
  return Error(Code::kFailed, "cannot open live directory " + parent + " of " + step.from + ": " + strerror(error));
}

class StepRunner {
 public:
  explicit StepRunner(const std::vector<StepRoot>& roots) : roots_(roots) {
    for (const auto& root : roots) {
      live_parents_.emplace_back(root.live_fd);
      upper_parents_.emplace_back(root.upper_fd);
    }
  }

  void Forward(const CommitStep& step) {
    // Most steps put a file beside the previous one: placing a non-directory moves no directory,
    // so the parents stay open for the next step with the same parents. Any other step may
    // move or replace one, and the next resolves its parents afresh.
    if (step.action == StepAction::kPlace && PlaceFile(step)) return;
    for (auto* parents : {&live_parents_, &upper_parents_})
      for (auto& dirs : *parents) dirs.Forget();
    Where w = Open(step);
    auto live = Lstat(w.live.get(), w.name, "live " + step.path);
    switch (step.action) {
      case StepAction::kPlace: {
        if (live && live->st_ino == step.new_ino) return;
        auto upper = Lstat(w.upper.get(), w.name, step.path + " in the sandbox");
        Place(step, live, upper, w.upper.get(), w.live.get(), w.name);
        return;
      }
      case StepAction::kMakeDirectory: {
        if (live && S_ISDIR(live->st_mode) && live->st_ino != step.old_ino) {
          SetMode(w.live.get(), w.name, step.new_mode, step.path);
          return;
        }
        if (step.old_ino != 0 && live) {
          if (live->st_ino != step.old_ino) throw ChangedDuringCommit(step.path);
          MoveToRemoved(w, step);
        } else if (live) {
          throw ChangedDuringCommit(step.path);
        }
        if (mkdirat(w.live.get(), w.name.c_str(), 0700) != 0) ThrowErrno("cannot create live directory " + step.path);
        SetMode(w.live.get(), w.name, step.new_mode, step.path);
        return;
      }
      case StepAction::kRemove:
        if (!live) return;
        if (live->st_ino != step.old_ino) throw ChangedDuringCommit(step.path);
        MoveToRemoved(w, step);
        return;
      case StepAction::kChmod:
        if (live) SetMode(w.live.get(), w.name, step.new_mode, step.path);
        return;
      case StepAction::kMove: {
        if (live && live->st_ino == step.old_ino) return;  // moved already
        if (!w.source) throw SourceUnreachable(step, w.source_errno);
        auto source = Lstat(w.source.get(), w.source_name, "live " + step.from);
        if (!source || source->st_ino != step.old_ino) throw ChangedDuringCommit(step.from);
        if (live) throw ChangedDuringCommit(step.path);
        RenameEntry(w.source.get(), w.source_name, w.live.get(), w.name, RENAME_NOREPLACE,
                    "move live " + step.from + " to " + step.path);
        return;
      }
    }
  }

  void Back(const CommitStep& step) {
    // Steps go forward in order, parents first: a live parent that is missing (or still the
    // non-directory a later-taken-back step replaced) means this step never went live.
    Where w = Open(step, /*missing_parent_is_fine=*/true);
    if (!w.live) return;
    auto live = Lstat(w.live.get(), w.name, "live " + step.path);
    switch (step.action) {
      case StepAction::kPlace: {
        if (!live || live->st_ino != step.new_ino) {
          // Whether it went live shows in the upper: after the exchange the old entry is there.
          auto upper = Lstat(w.upper.get(), w.name, step.path + " in the sandbox");
          bool went_live = step.old_ino != 0 && upper && upper->st_ino == step.old_ino;
          if (went_live && (!live || live->st_ino != step.old_ino)) throw ChangedSinceCommit(step.path);
          return;  // never went live, or already back
        }
        if (step.old_ino != 0) {
          auto backup = Lstat(w.upper.get(), w.name, step.path + " in the sandbox");
          if (!backup || backup->st_ino != step.old_ino)
            throw Error(Code::kFailed, "the backup of live " + step.path + " is missing; cannot restore it");
          RenameEntry(w.upper.get(), w.name, w.live.get(), w.name, RENAME_EXCHANGE, "restore live " + step.path);
        } else {
          RenameEntry(w.live.get(), w.name, w.upper.get(), w.name, RENAME_NOREPLACE, "take " + step.path + " back");
        }
        return;
      }
      case StepAction::kMakeDirectory:
        if (live && S_ISDIR(live->st_mode) && live->st_ino != step.old_ino) {
          if (unlinkat(w.live.get(), w.name.c_str(), AT_REMOVEDIR) != 0) {
            if (errno == ENOTEMPTY || errno == EEXIST)
              throw Error(Code::kConflict, "live directory " + step.path + " holds entries the commit did not make; cannot take it back");
            ThrowErrno("cannot take back live directory " + step.path);
          }
          live.reset();
        }
        if (step.old_ino != 0) RestoreFromRemoved(w, step, live.has_value());
        return;
      case StepAction::kRemove:
        RestoreFromRemoved(w, step, live.has_value());
        return;
      case StepAction::kChmod:
        if (live) SetMode(w.live.get(), w.name, step.old_mode, step.path);
        return;
      case StepAction::kMove: {
        // Not at the path: never moved (or the source changed before the move could happen,
        // which failed the commit), or moved back already. An undo checks beforehand that a
        // moved entry is still where the commit put it (undo_check.h).
        if (!live || live->st_ino != step.old_ino) return;
        if (!w.source) throw SourceUnreachable(step, w.source_errno);
        auto source = Lstat(w.source.get(), w.source_name, "live " + step.from);
        if (source) throw ChangedSinceCommit(step.from);
        RenameEntry(w.live.get(), w.name, w.source.get(), w.source_name, RENAME_NOREPLACE,
                    "move live " + step.path + " back to " + step.from);
        return;
      }
    }
  }

 private:
  /// Places `step` when neither its entry nor the live one it replaces is a directory, through
  /// the cached parents; false (nothing done) for a directory, which takes the general path.
  bool PlaceFile(const CommitStep& step) {
    if (step.root >= roots_.size()) throw Error(Code::kInvalidArgument, "commit step names root " + std::to_string(step.root));
    CheckRelativePath(step.path);
    if (step.path == ".") return false;
    std::string name;
    int live_dir = live_parents_[step.root].Open(step.path, name);
    if (live_dir < 0) return false;  // the general path names the failure
    if (step.old_ino == 0) return PlaceNewFile(step, live_dir, name);
    auto live = Lstat(live_dir, name, "live " + step.path);
    if (live && S_ISDIR(live->st_mode)) return false;
    if (live && live->st_ino == step.new_ino) return true;
    int upper_dir = upper_parents_[step.root].Open(step.path, name);
    if (upper_dir < 0) return false;
    auto upper = Lstat(upper_dir, name, step.path + " in the sandbox");
    if (upper && S_ISDIR(upper->st_mode)) return false;
    Place(step, live, upper, upper_dir, live_dir, name);
    return true;
  }

  /// PlaceFile where nothing was live: RENAME_NOREPLACE checks that the name is still free, so
  /// the live name is looked at only when the upper's entry is not there to go (a step that
  /// went live before a restart) or the name is taken. One stat fewer a new file.
  bool PlaceNewFile(const CommitStep& step, int live_dir, const std::string& name) {
    std::string same_name;  // (the upper's parent is opened by the same path)
    int upper_dir = upper_parents_[step.root].Open(step.path, same_name);
    if (upper_dir < 0) return false;
    auto upper = Lstat(upper_dir, name, step.path + " in the sandbox");
    if (upper && S_ISDIR(upper->st_mode)) return false;
    if (upper && upper->st_ino == step.new_ino && renameat2(upper_dir, name.c_str(), live_dir, name.c_str(), RENAME_NOREPLACE) == 0)
      return true;
    if (upper && upper->st_ino == step.new_ino && errno != EEXIST) ThrowErrno("cannot put " + step.path + " in place");
    auto live = Lstat(live_dir, name, "live " + step.path);
    if (live && S_ISDIR(live->st_mode)) return false;
    if (live && live->st_ino == step.new_ino) return true;
    Place(step, live, upper, upper_dir, live_dir, name);  // names what is wrong
    return true;
  }

  void Place(const CommitStep& step, const std::optional<struct stat>& live, const std::optional<struct stat>& upper,
             int upper_dir, int live_dir, const std::string& name) {
    if (!upper || upper->st_ino != step.new_ino)
      throw Error(Code::kFailed, step.path + " in the sandbox is not what the commit planned to put live");
    if (step.old_ino != 0) {
      if (!live || live->st_ino != step.old_ino) throw ChangedDuringCommit(step.path);
      // One atomic swap: readers see the old entry or the new one, never none; the old one
      // lands in the upper layer, where it is kept as the commit's backup.
      RenameEntry(upper_dir, name, live_dir, name, RENAME_EXCHANGE, "put " + step.path + " in place");
    } else {
      if (live) throw ChangedDuringCommit(step.path);
      RenameEntry(upper_dir, name, live_dir, name, RENAME_NOREPLACE, "put " + step.path + " in place");
    }
  }

  struct Where {
    UniqueFd live;   ///< the live parent directory
    UniqueFd upper;  ///< the upper layer's parent directory (kPlace only)
    std::string name;
    UniqueFd source;  ///< kMove: the live parent directory of `from`
    std::string source_name;
    int source_errno = 0;  ///< why `source` could not be opened
    int removed = -1;
  };

  Where Open(const CommitStep& step, bool missing_parent_is_fine = false) {
    if (step.root >= roots_.size()) throw Error(Code::kInvalidArgument, "commit step names root " + std::to_string(step.root));
    const StepRoot& root = roots_[step.root];
    CheckRelativePath(step.path);
    Where w;
    w.removed = root.removed_fd;
    if (step.path == ".") {
      if (step.action != StepAction::kChmod) throw Error(Code::kInvalidArgument, "only the mode of a root can change");
      w.live.reset(dup(root.live_fd));
      w.name.push_back('.');  // (= "." trips a GCC 12 -Wrestrict false alarm)
      return w;
    }
    auto [parent, name] = SplitParent(step.path);
    w.name = name;
    // Why beneath: a live parent replaced by a symlink (to /etc, to another user's home) must
    // make the commit fail, never write "through" it.
    w.live = OpenBeneath(root.live_fd, parent, O_PATH | O_DIRECTORY);
    if (!w.live && missing_parent_is_fine && (errno == ENOENT || errno == ENOTDIR)) return w;
    if (!w.live) {
      if (errno == ELOOP || errno == EXDEV || errno == ENOTDIR)
        throw Error(Code::kInvalidPath, "live path " + parent + " of " + step.path +
                                            " is a symlink or not a directory; refusing to commit through it");
      ThrowErrno("cannot open live directory " + parent + " of " + step.path);
    }
    if (step.action == StepAction::kPlace) {
      w.upper = OpenBeneath(root.upper_fd, parent, O_PATH | O_DIRECTORY);
      if (!w.upper) ThrowErrno("cannot open " + parent + " in the sandbox");
    }
    if (step.action == StepAction::kMove) {
      CheckRelativePath(step.from);
      auto [source_parent, source_name] = SplitParent(step.from);
      w.source_name = source_name;
      // A source directory that is gone matters only to a move not yet made (Forward), or
      // to taking one back (Back): the step decides, once it knows where it stands.
      w.source = OpenBeneath(root.live_fd, source_parent, O_PATH | O_DIRECTORY);
      if (!w.source) w.source_errno = errno;
    }
    return w;
  }

  void MoveToRemoved(Where& w, const CommitStep& step) {
    RenameEntry(w.live.get(), w.name, w.removed, step.RemovedName(), RENAME_NOREPLACE, "move live " + step.path + " aside");
  }

  void RestoreFromRemoved(Where& w, const CommitStep& step, bool live_exists) {
    if (!Lstat(w.removed, step.RemovedName(), "the set-aside copy of live " + step.path)) return;  // never moved, or already back
    if (live_exists) throw ChangedSinceCommit(step.path);
    RenameEntry(w.removed, step.RemovedName(), w.live.get(), w.name, RENAME_NOREPLACE, "restore live " + step.path);
  }

  const std::vector<StepRoot>& roots_;
  std::vector<ParentDirs> live_parents_, upper_parents_;  ///< per root, for PlaceFile
};

}  // namespace

void RollForward(const std::vector<CommitStep>& steps, const std::vector<StepRoot>& roots, bool sync) {
  StepRunner runner(roots);
  for (const auto& step : steps) runner.Forward(step);
  // Everything on disk before the daemon records the commit as applied.
  if (sync) SyncFileSystems(roots);
}

void RollBack(const std::vector<CommitStep>& steps, const std::vector<StepRoot>& roots, bool sync) {
  StepRunner runner(roots);
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) runner.Back(*it);
  if (sync) SyncFileSystems(roots);
}

}  // namespace sandboxd
