#include "base/directory_listing.h"
#include "base/tree_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

std::string Join(const std::string& parent, const std::string& name) { return parent.empty() ? name : parent + "/" + name; }

/// The names in the directory open at `dir` (no "." or "..").
std::vector<std::string> Names(int dir, const std::string& shown) {
  DirectoryListing listing = DirectoryListing::Of(dir);
  if (!listing) ThrowErrno("cannot read directory " + (shown.empty() ? std::string(".") : shown));
  return listing.Names();
}

std::string ProcPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

/// While alive, an entry of the caller's own that the caller may not read (a file made mode
/// 000 in a job) or, for a directory, not read and search, is readable and searchable; its
/// mode is put back at the end. Root needs none of it.
class TemporaryAccess {
 public:
  TemporaryAccess(int entry, const struct stat& st) : proc_(ProcPath(entry)), mode_(st.st_mode & 07777) {
    mode_t needed = S_ISDIR(st.st_mode) ? 0500 : 0400;
    if (geteuid() == 0 || st.st_uid != geteuid() || (mode_ & needed) == needed) return;
    changed_ = chmod(proc_.c_str(), mode_ | needed) == 0;
  }
  ~TemporaryAccess() {
    if (changed_) chmod(proc_.c_str(), mode_);
  }
  TemporaryAccess(const TemporaryAccess&) = delete;
  TemporaryAccess& operator=(const TemporaryAccess&) = delete;

 private:
  std::string proc_;
  mode_t mode_;
  bool changed_ = false;
};

/// Reopens the entry held by O_PATH fd `entry` (so that it cannot be swapped between the check
/// of its type and the open) with `flags`.
UniqueFd Reopen(int entry, int flags, const std::string& shown) {
  UniqueFd opened(open(ProcPath(entry).c_str(), flags | O_CLOEXEC | O_NOCTTY));
  if (!opened) ThrowErrno("cannot open " + shown);
  return opened;
}

class TreeCopier {
 public:
  explicit TreeCopier(const TreeCopyOptions& options) : options_(options) {}

  /// Copies the contents of the tree `from` into the tree `to` (both open for reading): a name
  /// of an inode any earlier tree of this copier copied becomes a link to that copy.
  void CopyTop(int from, int to) {
    to_root_ = to;
    CopyContents(from, to, "");
  }

 private:
  /// Copies the contents of `from` into `to`; `relative` is their path below the trees' tops.
  void CopyContents(int from, int to, const std::string& relative) {
    for (const auto& name : Names(from, relative)) CopyEntry(from, to, name, Join(relative, name));
  }

  void CopyEntry(int from_parent, int to_parent, const std::string& name, const std::string& relative) {
    UniqueFd entry(openat(from_parent, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!entry) ThrowErrno("cannot open " + relative);
    struct stat st;
    if (fstat(entry.get(), &st) != 0) ThrowErrno("cannot stat " + relative);
    if (S_ISDIR(st.st_mode)) {
      CopyDirectory(entry.get(), st, to_parent, name, relative);
    } else if (S_ISREG(st.st_mode)) {
      CopyFile(entry.get(), st, to_parent, name, relative);
    } else if (S_ISLNK(st.st_mode)) {
      CopySymlink(from_parent, st, to_parent, name, relative);
    } else if (S_ISFIFO(st.st_mode)) {
      if (mkfifoat(to_parent, name.c_str(), 0600) != 0) ThrowErrno("cannot make fifo " + relative);
      FinishEntry(to_parent, name, st, relative);
    } else {
      return;  // whiteouts, sockets and device nodes: left out (see the header)
    }
    if (options_.record_origin) RecordOrigin(to_parent, name, st.st_ino);
  }

  /// Best effort: a file system without trusted attributes only costs a later undo its aliases
  /// (it then refuses, as for an entry replaced since).
  static void RecordOrigin(int to_parent, const std::string& name, ino_t origin) {
    std::string value = std::to_string(origin);
    std::string path = ProcPath(to_parent) + "/" + name;
    lsetxattr(path.c_str(), kOriginAttribute, value.data(), value.size(), 0);
  }

  void CopyDirectory(int entry, const struct stat& st, int to_parent, const std::string& name, const std::string& relative) {
    // Searchable until its children are copied, not only while it is opened.
    TemporaryAccess access(entry, st);
    UniqueFd from = Reopen(entry, O_RDONLY | O_DIRECTORY, relative);
    if (mkdirat(to_parent, name.c_str(), 0700) != 0) ThrowErrno("cannot make directory " + relative);
    UniqueFd to(openat(to_parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!to) ThrowErrno("cannot open the copy of directory " + relative);
    CopyContents(from.get(), to.get(), relative);
    // Mode and times last: a read-only directory must still take its children, and adding them
    // moves its mtime.
    if (options_.keep_owner && fchown(to.get(), st.st_uid, st.st_gid) != 0) ThrowErrno("cannot set the owner of " + relative);
    if (fchmod(to.get(), st.st_mode & 07777) != 0) ThrowErrno("cannot set the mode of " + relative);
    timespec times[2] = {st.st_atim, st.st_mtim};
    futimens(to.get(), times);
  }

  void CopyFile(int entry, const struct stat& st, int to_parent, const std::string& name, const std::string& relative) {
    if (st.st_nlink > 1) {
      auto link = linked_.find({st.st_dev, st.st_ino});
      if (link != linked_.end()) {
        const auto& [copy_root, copy_path] = link->second;
        // By its directory and last name: the whole path may be longer than a syscall takes.
        auto [copy_parent_path, copy_name] = SplitParent(copy_path);
        UniqueFd copy_parent = OpenBeneath(copy_root, copy_parent_path, O_PATH | O_DIRECTORY);
        if (!copy_parent || linkat(copy_parent.get(), copy_name.c_str(), to_parent, name.c_str(), 0) != 0)
          ThrowErrno("cannot link " + relative + " to " + copy_path);
        return;
      }
      linked_[{st.st_dev, st.st_ino}] = {to_root_, relative};
    }
    UniqueFd from;
    {
      TemporaryAccess access(entry, st);
      from = Reopen(entry, O_RDONLY, relative);
    }
    UniqueFd to(openat(to_parent, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!to) ThrowErrno("cannot create the copy of " + relative);
    CopyFileContent(from.get(), to.get(), relative);
    // The owner before the mode: chown clears setuid and setgid bits.
    if (options_.keep_owner && fchown(to.get(), st.st_uid, st.st_gid) != 0) ThrowErrno("cannot set the owner of " + relative);
    if (fchmod(to.get(), st.st_mode & 07777) != 0) ThrowErrno("cannot set the mode of " + relative);
    timespec times[2] = {st.st_atim, st.st_mtim};
    futimens(to.get(), times);
  }

  void CopySymlink(int from_parent, const struct stat& st, int to_parent, const std::string& name, const std::string& relative) {
    std::vector<char> target(static_cast<size_t>(st.st_size) + 2);
    ssize_t size = readlinkat(from_parent, name.c_str(), target.data(), target.size());
    if (size < 0 || static_cast<size_t>(size) >= target.size()) ThrowErrno("cannot read symlink " + relative);
    if (symlinkat(std::string(target.data(), static_cast<size_t>(size)).c_str(), to_parent, name.c_str()) != 0)
      ThrowErrno("cannot make symlink " + relative);
    if (options_.keep_owner && fchownat(to_parent, name.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0)
      ThrowErrno("cannot set the owner of " + relative);
    timespec times[2] = {st.st_atim, st.st_mtim};
    utimensat(to_parent, name.c_str(), times, AT_SYMLINK_NOFOLLOW);
  }

  /// Owner, mode and times of a copied fifo.
  void FinishEntry(int to_parent, const std::string& name, const struct stat& st, const std::string& relative) {
    if (options_.keep_owner && fchownat(to_parent, name.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0)
      ThrowErrno("cannot set the owner of " + relative);
    if (fchmodat(to_parent, name.c_str(), st.st_mode & 07777, 0) != 0) ThrowErrno("cannot set the mode of " + relative);
    timespec times[2] = {st.st_atim, st.st_mtim};
    utimensat(to_parent, name.c_str(), times, AT_SYMLINK_NOFOLLOW);
  }

  TreeCopyOptions options_;
  int to_root_ = -1;  ///< the top of the tree being copied into
  /// source inode → its first copy: the top of its tree (open while the copier is) and its path
  std::map<std::pair<dev_t, ino_t>, std::pair<int, std::string>> linked_;
};

}  // namespace

void CopyFileContent(int from, int to, const std::string& shown) {
  // A reflink shares the blocks (btrfs, XFS): O(1) whatever the size.
  if (ioctl(to, FICLONE, from) == 0) return;
  for (;;) {
    ssize_t copied = copy_file_range(from, nullptr, to, nullptr, 1 << 30, 0);
    if (copied > 0) continue;
    if (copied == 0) return;
    if (errno == EINTR) continue;
    if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) break;
    ThrowErrno("cannot copy " + shown);
  }
  // Fallback: a bounded buffer, never the whole file in memory. Both offsets are where
  // copy_file_range left them (it moves them only by what it copied).
  std::vector<char> buffer(1 << 16);
  for (;;) {
    ssize_t got = read(from, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read " + shown);
    if (got == 0) return;
    for (ssize_t done = 0; done < got;) {
      ssize_t put = write(to, buffer.data() + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) ThrowErrno("cannot write " + shown);
      done += put;
    }
  }
}

void CopyTree(int from_dir, int to_dir, const TreeCopyOptions& options) { CopyTrees({{from_dir, to_dir}}, options); }

void CopyTrees(const std::vector<TreeCopy>& trees, const TreeCopyOptions& options) {
  std::vector<UniqueFd> tops;  // the copies' tops stay open: later trees link to names in them
  TreeCopier copier(options);
  for (const auto& tree : trees) {
    UniqueFd from(openat(tree.from_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    UniqueFd to(openat(tree.to_dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!from || !to) ThrowErrno("cannot open a directory to copy");
    copier.CopyTop(from.get(), to.get());
    tops.push_back(std::move(to));
  }
}

void RemoveTreeAt(int parent, const std::string& name, const std::string& shown) {
  if (unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM) ThrowErrno("cannot remove " + shown);
  UniqueFd dir(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir && errno == EACCES) {
    // A directory of one's own without read or search permission (a job may chmod 000 one).
    fchmodat(parent, name.c_str(), 0700, 0);
    dir.reset(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!dir) ThrowErrno("cannot open " + shown);
  struct stat st;
  if (fstat(dir.get(), &st) == 0 && (st.st_mode & 0700) != 0700 && st.st_uid == geteuid()) fchmod(dir.get(), 0700);
  for (const auto& child : Names(dir.get(), shown)) RemoveTreeAt(dir.get(), child, shown + "/" + child);
  if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) ThrowErrno("cannot remove " + shown);
}

}  // namespace sandboxd
