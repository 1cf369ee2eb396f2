#include "base/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <tuple>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// The fallback walk: each intermediate component opened O_PATH|O_DIRECTORY|O_NOFOLLOW, so a
/// symlink anywhere fails instead of being followed; ".." never gets here (CheckRelativePath).
UniqueFd WalkBeneath(int dirfd, const std::string& path, int flags, mode_t mode) {
  UniqueFd current(fcntl(dirfd, F_DUPFD_CLOEXEC, 3));
  if (!current) return current;
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) {
      return UniqueFd(openat(current.get(), part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode));
    }
    UniqueFd next(openat(current.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      if (errno == ENOTDIR) {
        // ENOTDIR from O_NOFOLLOW|O_DIRECTORY may be a symlink: report it as one.
        struct stat st;
        if (fstatat(current.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) errno = ELOOP;
      }
      return UniqueFd();
    }
    current = std::move(next);
    start = slash + 1;
  }
}

}  // namespace

void CheckRelativePath(const std::string& path) {
  if (path == ".") return;
  if (path.empty() || path[0] == '/')
    throw Error(Code::kInvalidPath, "path '" + path + "' is not relative to its root");
  size_t start = 0;
  for (;;) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..")
      throw Error(Code::kInvalidPath, "path '" + path + "' has an empty, '.' or '..' component");
    if (slash == std::string::npos) return;
    start = slash + 1;
  }
}

std::pair<std::string, std::string> SplitParent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

UniqueFd OpenBeneath(int dirfd, const std::string& path, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how));
  if (fd >= 0) return UniqueFd(fd);
  if (errno != ENOSYS) return UniqueFd();
  if (path == ".") return UniqueFd(openat(dirfd, ".", flags | O_CLOEXEC, mode));
  return WalkBeneath(dirfd, path, flags, mode);
}

int ParentDirs::Open(const std::string& path, std::string& name) {
  std::string parent;
  std::tie(parent, name) = SplitParent(path);
  if (!tried_ || parent != parent_) {
    tried_ = true;
    parent_ = parent;
    fd_ = OpenBeneath(root_fd_, parent, O_PATH | O_DIRECTORY);
    error_ = fd_ ? 0 : errno;
  }
  if (!fd_) errno = error_;
  return fd_ ? fd_.get() : -1;
}

std::optional<struct stat> StatBeneath(ParentDirs& dirs, const std::string& path) {
  struct stat st;
  if (path == ".") {
    if (fstat(dirs.root(), &st) != 0) ThrowErrno("cannot stat a root");
    return st;
  }
  std::string name;
  int parent = dirs.Open(path, name);
  if (parent < 0) return std::nullopt;
  if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    ThrowErrno("cannot stat " + path);
  }
  return st;
}

std::optional<struct stat> StatBeneath(int root_fd, const std::string& path) {
  ParentDirs dirs(root_fd);
  return StatBeneath(dirs, path);
}

}  // namespace sandboxd
