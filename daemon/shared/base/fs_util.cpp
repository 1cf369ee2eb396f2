#include "base/fs_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/directory_listing.h"
#include "base/errors.h"

namespace sandboxd {
namespace {

/// Opens directory `name` under `dirfd` for reading its entries, without following a symlink.
/// overlayfs makes its work directories mode 0: root reads them anyway, but an unprivileged
/// daemon (user mode) owning them must first give itself the right (through an O_PATH fd, so
/// that the mode lands on the directory and never on what a symlink points at).
UniqueFd OpenDirectoryToEmpty(int dirfd, const std::string& name) {
  UniqueFd fd(openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd || errno != EACCES) return fd;
  UniqueFd path(openat(dirfd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!path || chmod(("/proc/self/fd/" + std::to_string(path.get())).c_str(), 0700) != 0) {
    errno = EACCES;
    return UniqueFd();
  }
  return UniqueFd(openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

void RemoveChildren(int dirfd, const std::string& where) {
  DirectoryListing listing = DirectoryListing::Of(dirfd);
  if (!listing) ThrowErrno("cannot read " + where);
  while (const dirent* entry = listing.Next()) {
    std::string name = entry->d_name;
    if (unlinkat(dirfd, name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR) ThrowErrno("cannot remove " + where + "/" + name);
    UniqueFd child = OpenDirectoryToEmpty(dirfd, name);
    if (!child) ThrowErrno("cannot open " + where + "/" + name);
    // overlayfs work dirs are created mode 0; root needs no permission bits, but be explicit.
    fchmod(child.get(), 0700);
    RemoveChildren(child.get(), where + "/" + name);
    if (unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) ThrowErrno("cannot remove " + where + "/" + name);
  }
}

}  // namespace

void MakeDirectory(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) ThrowErrno("cannot create " + path);
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) ThrowErrno("cannot open " + path);
  if (fchown(fd.get(), uid == kOwnId ? geteuid() : uid, gid == kOwnId ? getegid() : gid) != 0) ThrowErrno("cannot chown " + path);
  if (fchmod(fd.get(), mode) != 0) ThrowErrno("cannot chmod " + path);
}

void MakeDirectoryWhole(const std::string& path, mode_t mode, uid_t uid, gid_t gid) {
  const std::string making = path + ".new";
  RemoveTree(making);
  MakeDirectory(making, mode, uid, gid);
  if (rename(making.c_str(), path.c_str()) != 0) ThrowErrno("cannot rename " + making + " to " + path);
}

void MakeDirectories(const std::string& path, mode_t mode) {
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), pos == std::string::npos ? mode : 0755) != 0 && errno != EEXIST)
      ThrowErrno("cannot create " + prefix);
  }
}

void RemoveTree(const std::string& path) {
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return;
  UniqueFd fd = OpenDirectoryToEmpty(AT_FDCWD, path);
  if (!fd) {
    if (errno == ENOENT) return;
    ThrowErrno("cannot open " + path);
  }
  RemoveChildren(fd.get(), path);
  if (rmdir(path.c_str()) != 0 && errno != ENOENT) ThrowErrno("cannot remove " + path);
}

void EmptyDirectory(const std::string& path) {
  UniqueFd fd = OpenDirectoryToEmpty(AT_FDCWD, path);
  if (!fd) ThrowErrno("cannot open " + path);
  RemoveChildren(fd.get(), path);
}

UniqueFd OpenDirectoryNoSymlinks(const std::string& path, int flags) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_DIRECTORY | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd < 0) {
    if (errno == ELOOP) throw Error(Code::kInvalidPath, path + " contains a symlink now; refusing to use it");
    ThrowErrno("cannot open " + path);
  }
  return UniqueFd(fd);
}

std::string RandomId() {
  unsigned char bytes[8];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t r = getrandom(bytes + got, sizeof bytes - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      ThrowErrno("getrandom");
    }
    got += static_cast<size_t>(r);
  }
  char text[17];
  for (size_t i = 0; i < sizeof bytes; ++i) snprintf(text + 2 * i, 3, "%02x", bytes[i]);
  return std::string(text, 16);
}

}  // namespace sandboxd

namespace sandboxd {

bool LooksLikeId(const std::string& name) {
  if (name.size() != 16) return false;
  for (char c : name)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::vector<std::string> ListDirectory(const std::string& path) {
  DirectoryListing listing = DirectoryListing::AtPath(path);
  if (!listing) {
    if (errno == ENOENT) return {};
    ThrowErrno("cannot list " + path);
  }
  return listing.Names();
}

void SyncFileSystemOf(int dir_fd, const std::string& shown) {
  UniqueFd dir(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir || syncfs(dir.get()) != 0) ThrowErrno("cannot sync the file system of " + shown);
}

}  // namespace sandboxd
