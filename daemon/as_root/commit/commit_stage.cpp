#include "commit/commit_stage.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/directory_listing.h"
#include "base/beneath.h"
#include "base/errors.h"
#include "commit/commit_planner.h"

namespace sandboxd {
namespace {

/// The directory `path` beneath `root`, made (mode 0700, owned by uid/gid) where missing.
/// Makes the directories of `path` beneath `root` (a stage) that are missing. Each one takes the
/// owner and mode of the directory at the same path beneath `like` (the upper), so that an
/// undo, which makes the upper's missing directories as the stage has them, gives them back as
/// the sandbox had them; where `like` has none, `uid`/`gid` and 0700.
UniqueFd MakeParents(int root, const std::string& path, uid_t uid, gid_t gid, int like = -1) {
  UniqueFd current(fcntl(root, F_DUPFD_CLOEXEC, 3));
  if (!current) ThrowErrno("cannot duplicate a directory fd");
  if (path == ".") return current;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string name = path.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    if (mkdirat(current.get(), name.c_str(), 0700) == 0) {
      std::optional<struct stat> model;
      if (like >= 0) model = StatBeneath(like, path.substr(0, end));
      bool as_upper = model && S_ISDIR(model->st_mode);
      if (fchownat(current.get(), name.c_str(), as_upper ? model->st_uid : uid, as_upper ? model->st_gid : gid, AT_SYMLINK_NOFOLLOW) != 0)
        ThrowErrno("cannot own staged directory " + path);
      if (as_upper && fchmodat(current.get(), name.c_str(), model->st_mode & 07777, 0) != 0)
        ThrowErrno("cannot set the mode of staged directory " + path);
    } else if (errno != EEXIST) {
      ThrowErrno("cannot make staged directory " + path);
    }
    UniqueFd next(openat(current.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) ThrowErrno("cannot open staged directory " + path);
    current = std::move(next);
  }
  return current;
}

std::optional<struct stat> StatAt(int dir, const std::string& name) {
  struct stat st;
  if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::nullopt;
    ThrowErrno("cannot stat " + name);
  }
  return st;
}

bool IsWhiteout(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0); }

/// Makes directory `relative` in the upper as the stage has it (owner, mode, opaque mark) where
/// the upper lacks it: after a commit of the whole upper the sandbox starts from an empty one.
void EnsureUpperDirectory(int upper_root, int stage_dir, const std::string& relative) {
  UniqueFd existing = OpenBeneath(upper_root, relative.empty() ? "." : relative, O_RDONLY | O_DIRECTORY);
  if (existing) {
    // An opaque mark SettleUpperAfterCommit kept with the commit goes back (an undo).
    UniqueFd staged(openat(stage_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    char value[8];
    for (const char* attribute : {"trusted.overlay.opaque", "user.overlay.opaque"}) {
      ssize_t size = staged ? fgetxattr(staged.get(), attribute, value, sizeof value) : -1;
      if (size > 0 && fsetxattr(existing.get(), attribute, value, static_cast<size_t>(size), 0) != 0)
        ThrowErrno("cannot mark " + (relative.empty() ? std::string(".") : relative) + " opaque in the sandbox");
    }
    return;
  }
  if (relative.empty()) return;
  auto [parent_path, name] = SplitParent(relative);
  UniqueFd parent = OpenBeneath(upper_root, parent_path, O_PATH | O_DIRECTORY);
  if (!parent) ThrowErrno("cannot open " + parent_path + " in the sandbox");
  struct stat st;
  if (fstat(stage_dir, &st) != 0) ThrowErrno("cannot stat staged directory " + relative);
  if (mkdirat(parent.get(), name.c_str(), 0700) != 0 && errno != EEXIST) ThrowErrno("cannot make " + relative + " in the sandbox");
  UniqueFd made = OpenBeneath(upper_root, relative, O_RDONLY | O_DIRECTORY);
  if (!made || fchown(made.get(), st.st_uid, st.st_gid) != 0 || fchmod(made.get(), st.st_mode & 07777) != 0)
    ThrowErrno("cannot set the owner and mode of " + relative + " in the sandbox");
  UniqueFd staged(openat(stage_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  char value[8];
  for (const char* attribute : {"trusted.overlay.opaque", "user.overlay.opaque"}) {
    ssize_t size = staged ? fgetxattr(staged.get(), attribute, value, sizeof value) : -1;
    if (size > 0 && fsetxattr(made.get(), attribute, value, static_cast<size_t>(size), 0) != 0)
      ThrowErrno("cannot mark " + relative + " opaque in the sandbox");
  }
}

void UnstageDirectory(int upper_root, int stage_dir, const std::string& relative) {
  EnsureUpperDirectory(upper_root, stage_dir, relative);
  std::vector<std::pair<std::string, bool>> entries;
  {
    DirectoryListing listing = DirectoryListing::Of(stage_dir);
    if (!listing) ThrowErrno("cannot read staged directory " + relative);
    while (const dirent* entry = listing.Next()) entries.push_back({entry->d_name, entry->d_type == DT_DIR});
  }
  for (const auto& [name, is_dir] : entries) {
    std::string path = relative.empty() ? name : relative + "/" + name;
    if (is_dir) {
      UniqueFd child(openat(stage_dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) ThrowErrno("cannot open staged directory " + path);
      UnstageDirectory(upper_root, child.get(), path);
      continue;
    }
    auto [parent_path, leaf] = SplitParent(path);
    UniqueFd upper_parent = OpenBeneath(upper_root, parent_path, O_PATH | O_DIRECTORY);
    if (!upper_parent) ThrowErrno("cannot open " + parent_path + " in the sandbox to put " + path + " back");
    if (StatAt(upper_parent.get(), leaf)) {
      if (unlinkat(stage_dir, name.c_str(), 0) != 0) ThrowErrno("cannot remove staged " + path);
    } else if (renameat(stage_dir, name.c_str(), upper_parent.get(), leaf.c_str()) != 0) {
      ThrowErrno("cannot put " + path + " back into the sandbox");
    }
  }
}

}  // namespace

void StageEntries(int upper_fd, int stage_fd, const std::vector<Change>& changes, uid_t uid, gid_t gid) {
  for (const auto& change : changes) {
    if (change.path == ".") continue;
    auto [parent_path, name] = SplitParent(change.path);
    bool directory = change.new_type == EntryType::kDirectory;
    if ((change.kind == ChangeKind::kModeChanged && directory) || !IsCommittable(change)) continue;  // stays in the upper
    if (directory) {
      MakeParents(stage_fd, change.path, uid, gid, upper_fd);
      continue;
    }
    UniqueFd upper_parent = OpenBeneath(upper_fd, parent_path, O_PATH | O_DIRECTORY);
    if (!upper_parent) ThrowErrno("cannot open " + parent_path + " in the sandbox");
    auto st = StatAt(upper_parent.get(), name);
    if (!st) {
      if (change.kind == ChangeKind::kDeleted) continue;  // a deleted directory's whiteout, or none
      throw Error(Code::kFailed, change.path + " vanished from the sandbox during the commit");
    }
    if (change.kind == ChangeKind::kDeleted && !IsWhiteout(*st)) continue;
    UniqueFd stage_parent = MakeParents(stage_fd, parent_path, uid, gid, upper_fd);
    if (renameat(upper_parent.get(), name.c_str(), stage_parent.get(), name.c_str()) != 0)
      ThrowErrno("cannot stage " + change.path + " for the commit");
  }
}

UniqueFd CreateStagedFile(int upper_fd, int live_fd, int stage_fd, const std::string& path, uid_t uid, gid_t gid) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd upper_parent = OpenBeneath(upper_fd, parent_path, O_PATH | O_DIRECTORY);
  if (!upper_parent) ThrowErrno("cannot open " + parent_path + " in the sandbox");
  auto st = StatAt(upper_parent.get(), name);
  if (!st || !S_ISREG(st->st_mode)) throw Error(Code::kFailed, path + " is no longer a file in the sandbox");
  // A mode change is no hunk: the merged file keeps the live file's mode.
  if (auto live = StatBeneath(live_fd, path); live && S_ISREG(live->st_mode)) st->st_mode = live->st_mode;
  UniqueFd stage_parent = MakeParents(stage_fd, parent_path, uid, gid, upper_fd);
  UniqueFd file(openat(stage_parent.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) ThrowErrno("cannot stage the merged " + path);
  if (fchown(file.get(), st->st_uid, st->st_gid) != 0 || fchmod(file.get(), st->st_mode & 07777) != 0)
    ThrowErrno("cannot set the owner and mode of the merged " + path);
  return file;
}

void Unstage(int upper_fd, int stage_fd) { UnstageDirectory(upper_fd, stage_fd, ""); }

namespace {

constexpr const char* kOpaqueAttributes[] = {"trusted.overlay.opaque", "user.overlay.opaque"};

/// The opaque mark on directory `dir` ({attribute, value}), or nothing.
std::optional<std::pair<std::string, std::string>> OpaqueMark(int dir) {
  char value[8];
  for (const char* attribute : kOpaqueAttributes) {
    ssize_t size = fgetxattr(dir, attribute, value, sizeof value);
    if (size > 0) return std::make_pair(std::string(attribute), std::string(value, static_cast<size_t>(size)));
  }
  return std::nullopt;
}

std::vector<std::string> NamesIn(int dir) {
  return DirectoryListing::Of(dir).Names();
}

/// Turns the opaque upper directory `path` into a plain one with whiteouts (see the header).
/// `made`: the commit made the live directory, so that all it holds went live.
void SettleOpaqueDirectory(int upper_fd, int live_fd, int stage_fd, const std::string& path,
                           const std::set<std::string>& went_live_paths, bool made, uid_t uid, gid_t gid) {
  UniqueFd upper_dir = OpenBeneath(upper_fd, path, O_RDONLY | O_DIRECTORY);
  if (!upper_dir) return;  // not in the upper (a parent made for a committed child)
  auto mark = OpaqueMark(upper_dir.get());
  if (!mark) return;
  // Keep the mark with the commit first: an undo must be able to put it back.
  UniqueFd stage_dir = MakeParents(stage_fd, path, uid, gid);
  UniqueFd stage_readable(openat(stage_dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!stage_readable ||
      fsetxattr(stage_readable.get(), mark->first.c_str(), mark->second.data(), mark->second.size(), 0) != 0)
    ThrowErrno("cannot keep the opaque mark of " + path + " with the commit");
  if (UniqueFd live_dir = made ? UniqueFd() : OpenBeneath(live_fd, path, O_RDONLY | O_DIRECTORY)) {
    for (const auto& name : NamesIn(live_dir.get())) {
      std::string child = path == "." ? name : path + "/" + name;
      if (went_live_paths.count(child)) continue;  // committed: it shows through now
      struct stat st;
      if (fstatat(upper_dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) continue;  // the upper's hides it
      if (mknodat(upper_dir.get(), name.c_str(), S_IFCHR | 0000, makedev(0, 0)) != 0 && errno != EEXIST)
        ThrowErrno("cannot keep " + child + " deleted in the sandbox");
    }
  }
  if (fremovexattr(upper_dir.get(), mark->first.c_str()) != 0 && errno != ENODATA)
    ThrowErrno("cannot clear the opaque mark of " + path + " in the sandbox");
}

}  // namespace

void SettleUpperAfterCommit(int upper_fd, int live_fd, int stage_fd, int index_fd, const StepPages& root_steps, uid_t uid, gid_t gid) {
  // The steps are read twice, a page at a time; what is held grows with the directories they
  // touch and the index (few), never with the steps: a commit may have a million.
  const std::set<ino_t> indexed = IndexInodes(index_fd);
  std::set<ino_t> went_live;  // of those the index links
  std::set<std::string> touched = {"."}, made;
  root_steps([&](const std::vector<CommitStep>& steps) {
    for (const auto& step : steps) {
      if (step.action == StepAction::kPlace && indexed.count(step.new_ino)) went_live.insert(step.new_ino);
      if (step.action == StepAction::kMakeDirectory || step.action == StepAction::kChmod) touched.insert(step.path);
      if (step.action == StepAction::kMakeDirectory) made.insert(step.path);
      for (std::string at = step.path; at.find('/') != std::string::npos;) {
        at.resize(at.rfind('/'));
        touched.insert(at);
      }
    }
  });
  // Opaque directories the commit made live hold only what went live (a new directory the
  // overlay made is opaque: all its files may be a million). Those it did not make hold live
  // entries of their own too, which the sandbox still has deleted unless they went live.
  std::set<std::string> opaque, kept_opaque;
  for (const auto& path : touched)
    if (UniqueFd dir = OpenBeneath(upper_fd, path, O_RDONLY | O_DIRECTORY); dir && OpaqueMark(dir.get()))
      (made.count(path) ? opaque : kept_opaque).insert(path);
  std::set<std::string> went_live_paths;  // in kept_opaque directories
  if (!kept_opaque.empty()) {
    root_steps([&](const std::vector<CommitStep>& steps) {
      for (const auto& step : steps) {
        if (step.action == StepAction::kRemove || step.action == StepAction::kChmod) continue;
        size_t slash = step.path.rfind('/');
        if (kept_opaque.count(slash == std::string::npos ? "." : step.path.substr(0, slash))) went_live_paths.insert(step.path);
      }
    });
  }
  for (const auto& path : opaque) SettleOpaqueDirectory(upper_fd, live_fd, stage_fd, path, {}, true, uid, gid);
  for (const auto& path : kept_opaque) SettleOpaqueDirectory(upper_fd, live_fd, stage_fd, path, went_live_paths, false, uid, gid);
  ForgetIndexEntries(index_fd, went_live);
}

void SettleUpperAfterCommit(int upper_fd, int live_fd, int stage_fd, int index_fd, const std::vector<CommitStep>& root_steps,
                            uid_t uid, gid_t gid) {
  SettleUpperAfterCommit(upper_fd, live_fd, stage_fd, index_fd, [&](const auto& visit) { visit(root_steps); }, uid, gid);
}

std::set<ino_t> IndexInodes(int index_fd) {
  std::set<ino_t> inodes;
  if (index_fd < 0) return inodes;
  DirectoryListing listing = DirectoryListing::Of(index_fd);
  while (const dirent* entry = listing.Next()) {
    struct stat st;
    if (fstatat(listing.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) inodes.insert(st.st_ino);
  }
  return inodes;
}

std::set<ino_t> FileInodesBeneath(int dir_fd, bool linked_only, const std::set<ino_t>* among) {
  std::set<ino_t> inodes;
  DirectoryListing listing = DirectoryListing::Of(dir_fd);
  while (const dirent* entry = listing.Next()) {
    struct stat st;
    if (fstatat(listing.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      if ((!linked_only || st.st_nlink > 1) && (!among || among->count(st.st_ino))) inodes.insert(st.st_ino);
      continue;
    }
    UniqueFd sub(openat(listing.fd(), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub)
      for (ino_t ino : FileInodesBeneath(sub.get(), linked_only, among)) inodes.insert(ino);
  }
  return inodes;
}

namespace {

/// The paths (relative to `dir_fd`) of every regular file beneath it whose inode is one of
/// `inodes`, never through a symlink.
void CollectNamesOf(int dir_fd, const std::string& relative, const std::set<ino_t>& inodes, std::vector<std::string>& paths) {
  DirectoryListing listing = DirectoryListing::Of(dir_fd);
  while (const dirent* entry = listing.Next()) {
    std::string path = relative.empty() ? entry->d_name : relative + "/" + entry->d_name;
    struct stat st;
    if (fstatat(listing.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && inodes.count(st.st_ino)) paths.push_back(path);
    if (!S_ISDIR(st.st_mode)) continue;
    UniqueFd sub(openat(listing.fd(), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub) CollectNamesOf(sub.get(), path, inodes, paths);
  }
}

std::vector<std::string> NamesOf(int dir_fd, const std::set<ino_t>& inodes) {
  std::vector<std::string> paths;
  if (!inodes.empty()) CollectNamesOf(dir_fd, "", inodes, paths);
  return paths;
}

}  // namespace

std::vector<std::string> DropNamesOf(int upper_fd, const std::set<ino_t>& inodes) {
  std::vector<std::string> paths = NamesOf(upper_fd, inodes);
  for (const auto& path : paths) {
    auto [parent_path, name] = SplitParent(path);
    UniqueFd parent = OpenBeneath(upper_fd, parent_path, O_PATH | O_DIRECTORY);
    if (!parent || (unlinkat(parent.get(), name.c_str(), 0) != 0 && errno != ENOENT))
      ThrowErrno("cannot drop " + path + ", another name of a committed file, from the sandbox");
  }
  return paths;
}

std::vector<std::string> StashNamesOf(int upper_fd, int stage_fd, const std::set<ino_t>& inodes, uid_t uid, gid_t gid) {
  std::vector<std::string> paths = NamesOf(upper_fd, inodes);
  for (const auto& path : paths) {
    auto [parent_path, name] = SplitParent(path);
    UniqueFd parent = OpenBeneath(upper_fd, parent_path, O_PATH | O_DIRECTORY);
    if (!parent) ThrowErrno("cannot open " + parent_path + " in the sandbox");
    UniqueFd stage_parent = MakeParents(stage_fd, parent_path, uid, gid, upper_fd);
    // The stage holds something at this path already only if the name was committed itself:
    // then it is the one an undo brings back, and this name of the inode just goes.
    if (StatAt(stage_parent.get(), name)) {
      if (unlinkat(parent.get(), name.c_str(), 0) != 0 && errno != ENOENT)
        ThrowErrno("cannot drop " + path + ", another name of a committed file, from the sandbox");
    } else if (renameat(parent.get(), name.c_str(), stage_parent.get(), name.c_str()) != 0 && errno != ENOENT) {
      ThrowErrno("cannot keep " + path + ", another name of a committed file, with the commit");
    }
  }
  return paths;
}

void ForgetIndexEntries(int index_fd, const std::set<ino_t>& inodes) {
  if (index_fd < 0 || inodes.empty()) return;
  DirectoryListing listing = DirectoryListing::Of(index_fd);
  std::vector<std::string> stale;
  while (const dirent* entry = listing.Next()) {
    struct stat st;
    if (fstatat(listing.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) && inodes.count(st.st_ino))
      stale.push_back(entry->d_name);
  }
  for (const auto& name : stale) unlinkat(index_fd, name.c_str(), 0);
}

}  // namespace sandboxd
