#include "commit/landing_area.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/directory_listing.h"
#include "base/beneath.h"
#include "base/errors.h"
#include "base/fs_util.h"
#include "base/tree_copy.h"
#include "helper_clients/helper_client.h"

namespace sandboxd {
namespace {

/// Empties `path` (a directory of the daemon's, made with its owner and mode when the commit
/// was prepared) in place (EmptyDirectory): removed and made again, a kill between left none for
/// the evacuation that runs again at the next start, and that commit could never be finished.
UniqueFd FreshDirectory(const std::string& path) {
  EmptyDirectory(path);
  return OpenDirectoryNoSymlinks(path, O_RDONLY | O_DIRECTORY);
}

}  // namespace

std::string LandingName(const std::string& sandbox_id, int64_t commit) {
  return ".sandboxd-commit-" + sandbox_id + "-" + std::to_string(commit);
}

LandingArea::LandingArea(OwnerHelpers& helpers, UserCredentials owner, int live_root_fd, std::string name,
                         std::string shown_root)
    : helpers_(helpers),
      owner_(std::move(owner)),
      live_root_fd_(live_root_fd),
      name_(std::move(name)),
      shown_(shown_root + "/" + name_) {}

void LandingArea::RunActions(const nlohmann::json& actions, const std::vector<int>& fds) const {
  helpers_.Run(HelperOp::kLanding, owner_, {{"actions", actions}}, fds);
}

void LandingArea::Fill(int stage_fd) const {
  // fd 3: the live root, 4: the stage; the area's own parts are opened by the helper's "make".
  try {
    RunActions({{"make", 3, name_}, {"copy", 4, 3, name_ + "/upper"}, {"sync", 3}}, {live_root_fd_, stage_fd});
  } catch (const Error& e) {
    // The helper knows the name only; the owner needs the whole path to see what is in the way.
    if (e.code() != Code::kConflict) throw;
    throw Error(Code::kConflict, shown_ + " is in the way: sandboxd needs that name in the live tree for the commit");
  }
}

void LandingArea::Import(int backup_fd, int removed_fd) const {
  RunActions({{"remove", 3, name_},
              {"make", 3, name_},
              {"copy", 4, 3, name_ + "/upper", 5, name_ + "/removed"},  // one copy: a file may be in both
              {"sync", 3}},
             {live_root_fd_, backup_fd, removed_fd});
}

void LandingArea::Evacuate(const std::string& backup_dir, const std::string& removed_dir) const {
  if (!Exists()) return;  // evacuated already, and the area removed
  // Evacuated already, and the area's removal cut off: what is left of it may lack copies the
  // backups hold. Emptying the backups to copy it again would lose those for an undo.
  const std::string done = backup_dir + ".evacuated";
  struct stat mark;
  if (lstat(done.c_str(), &mark) == 0) return;
  // Read as root, but only through fds opened beneath the root without following symlinks, and
  // only regular files are ever opened for reading (tree_copy.h); the copies keep their owners,
  // so a file the owner could not read stays unreadable to the owner in the backups too.
  UniqueFd upper = OpenUpper(), removed = OpenRemoved();
  UniqueFd backup_to = FreshDirectory(backup_dir), removed_to = FreshDirectory(removed_dir);
  // One copy of both: a file the commit replaced under one name and removed under another is
  // one file in its backups too, and comes back as one with an undo.
  CopyTrees({{upper.get(), backup_to.get()}, {removed.get(), removed_to.get()}}, {.keep_owner = true, .record_origin = true});
  SyncFileSystemOf(backup_to.get(), backup_dir);
  // Marked whole only once the copies are on disk (synced above), and the mark synced too.
  UniqueFd made(open(done.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!made) ThrowErrno("cannot mark " + backup_dir + " as evacuated");
  SyncFileSystemOf(backup_to.get(), backup_dir);
}

std::string LandingArea::Remove() const {
  try {
    RunActions({{"remove", 3, name_}, {"sync", 3}}, {live_root_fd_});
  } catch (const Error& e) {
    return "could not remove all of " + shown_ + " (" + e.what() + "); its owner may remove it";
  }
  return "";
}

bool LandingArea::Exists() const { return StatBeneath(live_root_fd_, name_).has_value(); }

UniqueFd LandingArea::OpenPart(const std::string& part) const {
  UniqueFd fd = OpenBeneath(live_root_fd_, name_ + "/" + part, O_PATH | O_DIRECTORY);
  if (!fd) ThrowErrno("cannot open " + shown_ + "/" + part);
  return fd;
}

UniqueFd LandingArea::OpenUpper() const { return OpenPart("upper"); }
UniqueFd LandingArea::OpenRemoved() const { return OpenPart("removed"); }

std::vector<CommitStep> RebaseOnImportedBackups(std::vector<CommitStep> steps, size_t root, int upper_fd, int removed_fd) {
  for (auto& step : steps) {
    if (step.root != root || step.old_ino == 0) continue;
    std::optional<struct stat> copy;
    switch (step.action) {
      case StepAction::kPlace:
        copy = StatBeneath(upper_fd, step.path);
        break;
      case StepAction::kRemove:
      case StepAction::kMakeDirectory:
        copy = StatBeneath(removed_fd, step.RemovedName());
        break;
      case StepAction::kMove:  // the live entry itself moved; nothing was set aside
      case StepAction::kChmod:
        continue;
    }
    if (!copy) throw Error(Code::kFailed, "the backup of live " + step.path + " is missing; cannot undo");
    step.old_ino = copy->st_ino;
  }
  return steps;
}

namespace {

/// The inode number Evacuate recorded on the entry `name` in `parent`, 0 when none.
ino_t RecordedOrigin(int parent, const std::string& name) {
  std::string path = "/proc/self/fd/" + std::to_string(parent) + "/" + name;
  char value[32];
  ssize_t size = lgetxattr(path.c_str(), kOriginAttribute, value, sizeof value - 1);
  if (size <= 0) return 0;
  value[size] = '\0';
  return static_cast<ino_t>(std::strtoull(value, nullptr, 10));
}

/// Adds an alias for `name` in `parent` (a backup) and everything beneath it, whose live path
/// is `live_path`.
void CollectAliases(int parent, const std::string& name, const std::string& live_path, int live_fd, size_t root,
                    std::vector<InodeAlias>& aliases) {
  ino_t original = RecordedOrigin(parent, name);
  auto live = StatBeneath(live_fd, live_path);
  if (original != 0 && live) aliases.push_back({root, live_path, original, live->st_ino});
  struct stat st;
  if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) return;
  UniqueFd dir(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return;
  for (const auto& child : DirectoryListing::Of(dir.get()).Names())
    CollectAliases(dir.get(), child, live_path == "." ? child : live_path + "/" + child, live_fd, root, aliases);
}

}  // namespace

std::vector<InodeAlias> RestoredAliases(int backup_fd, int removed_fd, int live_fd, size_t root,
                                        const std::vector<CommitStep>& steps) {
  std::vector<InodeAlias> aliases;
  // The backups of replaced entries sit at their own paths (beside the directories of a stage).
  UniqueFd backups(openat(backup_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (backups) {
    for (const auto& step : steps)
      if (step.root == root && step.action == StepAction::kPlace && step.old_ino != 0) {
        auto [parent_path, name] = SplitParent(step.path);
        UniqueFd parent = OpenBeneath(backups.get(), parent_path, O_PATH | O_DIRECTORY);
        if (parent) CollectAliases(parent.get(), name, step.path, live_fd, root, aliases);
      }
  }
  // Removed entries (whole trees) sit as e<seq>.
  for (const auto& step : steps)
    if (step.root == root && step.old_ino != 0 &&
        (step.action == StepAction::kRemove || step.action == StepAction::kMakeDirectory))
      CollectAliases(removed_fd, step.RemovedName(), step.path, live_fd, root, aliases);
  return aliases;
}

}  // namespace sandboxd
