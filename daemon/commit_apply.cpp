#include "commit_apply.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "beneath.h"
#include "errors.h"
#include "fd.h"

namespace sandboxd {
namespace {

std::string TempName() {
  unsigned char bytes[6];
  if (getrandom(bytes, sizeof bytes, 0) != sizeof bytes) ThrowErrno("getrandom");
  char name[32];
  snprintf(name, sizeof name, ".#sandboxd.%02x%02x%02x%02x%02x%02x", bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]);
  return name;
}

/// Removes `name` in `parent`, recursively for a directory, never following a symlink (a
/// symlink is unlinked itself). Missing is fine.
void RemoveEntry(int parent, const std::string& name, const std::string& shown) {
  if (unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM) ThrowErrno("cannot remove live " + shown);
  UniqueFd dir(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) ThrowErrno("cannot open live " + shown);
  int list_fd = dup(dir.get());
  DIR* listing = list_fd >= 0 ? fdopendir(list_fd) : nullptr;
  if (!listing) {
    if (list_fd >= 0) close(list_fd);
    ThrowErrno("cannot read live " + shown);
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(listing))
    if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) names.emplace_back(entry->d_name);
  closedir(listing);
  for (const auto& child : names) RemoveEntry(dir.get(), child, shown + "/" + child);
  if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) ThrowErrno("cannot remove live " + shown);
}

void CopyContent(int from, int to, const std::string& shown) {
  for (;;) {
    ssize_t copied = copy_file_range(from, nullptr, to, nullptr, 1 << 30, 0);
    if (copied > 0) continue;
    if (copied == 0) return;
    if (errno == EINTR) continue;
    if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) break;
    ThrowErrno("cannot copy " + shown);
  }
  // Fallback: a bounded buffer, never the whole file in memory.
  std::vector<char> buffer(1 << 16);
  for (;;) {
    ssize_t got = read(from, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read " + shown + " in the sandbox");
    if (got == 0) return;
    for (ssize_t done = 0; done < got;) {
      ssize_t put = write(to, buffer.data() + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) ThrowErrno("cannot write " + shown);
      done += put;
    }
  }
}

class Applier {
 public:
  Applier(int live, int upper) : live_(live), upper_(upper) {}
  ApplyResult result;

  void Apply(const Change& change) {
    CheckRelativePath(change.path);
    if (change.path == ".") {
      SetDirectoryMode(".", change.new_mode);
      ++result.applied;
      return;
    }
    auto [parent_path, name] = SplitParent(change.path);
    // Why beneath: a live parent replaced by a symlink (to /etc, to another user's home) must
    // make the commit fail, never write "through" it.
    UniqueFd parent = OpenBeneath(live_, parent_path, O_RDONLY | O_DIRECTORY);
    if (!parent) {
      if (errno == ELOOP || errno == EXDEV || errno == ENOTDIR)
        throw Error(Code::kInvalidPath, "live path " + parent_path + " of " + change.path +
                                            " is a symlink or not a directory; refusing to commit through it");
      ThrowErrno("cannot open live directory " + parent_path + " of " + change.path);
    }
    switch (change.kind) {
      case ChangeKind::kDeleted:
        RemoveEntry(parent.get(), name, change.path);
        break;
      case ChangeKind::kModeChanged:
        if (change.new_type == EntryType::kDirectory) SetDirectoryMode(change.path, change.new_mode);
        else SetMode(parent.get(), name, change);
        break;
      case ChangeKind::kAdded:
      case ChangeKind::kModified:
      case ChangeKind::kTypeChanged:
        if (!Create(parent.get(), name, change)) return;
        break;
    }
    if (fsync(parent.get()) != 0 && errno != EINVAL) ThrowErrno("cannot sync live directory of " + change.path);
    ++result.applied;
  }

 private:
  void SetDirectoryMode(const std::string& path, mode_t mode) {
    UniqueFd dir = OpenBeneath(live_, path, O_RDONLY | O_DIRECTORY);
    if (!dir) ThrowErrno("cannot open live directory " + path);
    if (fchmod(dir.get(), mode) != 0) ThrowErrno("cannot change the mode of live " + path);
  }

  void SetMode(int parent, const std::string& name, const Change& change) {
    // O_PATH: a fifo must not block, a file need not be readable. A symlink has no mode.
    UniqueFd entry(openat(parent, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!entry) ThrowErrno("cannot open live " + change.path);
    struct stat st;
    if (fstat(entry.get(), &st) != 0) ThrowErrno("cannot stat live " + change.path);
    if (S_ISLNK(st.st_mode)) return;
    std::string proc = "/proc/self/fd/" + std::to_string(entry.get());
    if (chmod(proc.c_str(), change.new_mode) != 0) ThrowErrno("cannot change the mode of live " + change.path);
  }

  /// Creates or replaces the live entry from the upper. False when it was skipped.
  bool Create(int parent, const std::string& name, const Change& change) {
    struct stat live;
    bool exists = fstatat(parent, name.c_str(), &live, AT_SYMLINK_NOFOLLOW) == 0;
    switch (change.new_type) {
      case EntryType::kDirectory:
        if (exists && !S_ISDIR(live.st_mode)) RemoveEntry(parent, name, change.path);
        if (!(exists && S_ISDIR(live.st_mode)) && mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST)
          ThrowErrno("cannot create live directory " + change.path);
        SetDirectoryMode(change.path, change.new_mode);
        return true;
      case EntryType::kFile:
        if (exists && S_ISDIR(live.st_mode)) RemoveEntry(parent, name, change.path);
        ReplaceWithFile(parent, name, change);
        return true;
      case EntryType::kSymlink:
        if (exists && S_ISDIR(live.st_mode)) RemoveEntry(parent, name, change.path);
        ReplaceWithSymlink(parent, name, change);
        return true;
      case EntryType::kFifo:
        if (exists && S_ISDIR(live.st_mode)) RemoveEntry(parent, name, change.path);
        ReplaceWithFifo(parent, name, change);
        return true;
      default:
        result.skipped.push_back("skipped " + change.path + ": sockets and device nodes are not committed");
        return false;
    }
  }

  void ReplaceWithFile(int parent, const std::string& name, const Change& change) {
    UniqueFd source = OpenBeneath(upper_, change.path, O_RDONLY | O_NOCTTY);
    if (!source) ThrowErrno("cannot open " + change.path + " in the sandbox");
    struct stat st;
    if (fstat(source.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw Error(Code::kFailed, change.path + " in the sandbox is no longer a file");
    std::string temp = TempName();
    UniqueFd target(openat(parent, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!target) ThrowErrno("cannot create a temporary file for " + change.path);
    try {
      CopyContent(source.get(), target.get(), change.path);
      // Exactly the sandbox's mode, setuid/setgid included; fchmod is not subject to umask.
      if (fchmod(target.get(), change.new_mode) != 0) ThrowErrno("cannot set the mode of " + change.path);
      timespec times[2] = {st.st_atim, st.st_mtim};
      futimens(target.get(), times);
      if (fsync(target.get()) != 0) ThrowErrno("cannot sync " + change.path);
      if (renameat(parent, temp.c_str(), parent, name.c_str()) != 0) ThrowErrno("cannot put " + change.path + " in place");
    } catch (...) {
      unlinkat(parent, temp.c_str(), 0);
      throw;
    }
  }

  void ReplaceWithSymlink(int parent, const std::string& name, const Change& change) {
    auto [upper_parent_path, upper_name] = SplitParent(change.path);
    UniqueFd upper_parent = OpenBeneath(upper_, upper_parent_path, O_PATH | O_DIRECTORY);
    if (!upper_parent) ThrowErrno("cannot open " + upper_parent_path + " in the sandbox");
    std::vector<char> target(4096);
    ssize_t size = readlinkat(upper_parent.get(), upper_name.c_str(), target.data(), target.size());
    if (size < 0 || static_cast<size_t>(size) >= target.size()) ThrowErrno("cannot read symlink " + change.path + " in the sandbox");
    std::string temp = TempName();
    if (symlinkat(std::string(target.data(), static_cast<size_t>(size)).c_str(), parent, temp.c_str()) != 0)
      ThrowErrno("cannot create symlink " + change.path);
    if (renameat(parent, temp.c_str(), parent, name.c_str()) != 0) {
      int err = errno;
      unlinkat(parent, temp.c_str(), 0);
      ThrowErrno(err, "cannot put symlink " + change.path + " in place");
    }
  }

  void ReplaceWithFifo(int parent, const std::string& name, const Change& change) {
    std::string temp = TempName();
    if (mkfifoat(parent, temp.c_str(), 0600) != 0) ThrowErrno("cannot create fifo " + change.path);
    if (fchmodat(parent, temp.c_str(), change.new_mode, 0) != 0 ||
        renameat(parent, temp.c_str(), parent, name.c_str()) != 0) {
      int err = errno;
      unlinkat(parent, temp.c_str(), 0);
      ThrowErrno(err, "cannot put fifo " + change.path + " in place");
    }
  }

  int live_;
  int upper_;
};

}  // namespace

ApplyResult ApplyChanges(const std::vector<Change>& changes, int live_root_fd, int upper_root_fd) {
  Applier applier(live_root_fd, upper_root_fd);
  for (const auto& change : changes) applier.Apply(change);
  return applier.result;
}

}  // namespace sandboxd
