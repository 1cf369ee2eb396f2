#include "base/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <tuple>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// The longest relative path one openat2 call resolves (PATH_MAX counts the closing NUL).
constexpr size_t kMaxResolved = PATH_MAX - 1;

/// openat2 beneath `dirfd`: never through a symlink (the last component included), never
/// out of `dirfd` (an absolute path or a '..' above it is EXDEV), never a magic link.
int OpenAt2(int dirfd, const char* path, int flags, mode_t mode) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

/// Whether a component of `path` is "..".
bool HasDotDot(const std::string& path) {
  for (size_t start = 0; start <= path.size();) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (path.compare(start, slash - start, "..") == 0) return true;
    start = slash + 1;
  }
  return false;
}

/// The fallback walk: each intermediate component opened O_PATH|O_DIRECTORY|O_NOFOLLOW, so a
/// symlink anywhere fails instead of being followed; a ".." is refused (EXDEV), as it could
/// climb out of `dirfd`.
UniqueFd WalkBeneath(int dirfd, const std::string& path, int flags, mode_t mode) {
  if (HasDotDot(path)) {
    errno = EXDEV;
    return UniqueFd();
  }
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
  if (path.size() <= kMaxResolved) {
    int fd = OpenAt2(dirfd, path.c_str(), flags, mode);
    if (fd >= 0) return UniqueFd(fd);
    if (errno != ENOSYS) return UniqueFd();
    if (path == ".") return UniqueFd(openat(dirfd, ".", flags | O_CLOEXEC, mode));
    return WalkBeneath(dirfd, path, flags, mode);
  }
  // Longer than one call takes (ENAMETOOLONG): resolved a piece at a time, each piece as long
  // as one call takes and cut after a '/', each beneath the directory the one before opened.
  // An absolute path or a '..' is refused outright (a '..' resolved within its piece could
  // mean less than it says; it never climbs above the piece's directory).
  if (path[0] == '/' || HasDotDot(path)) {
    errno = EXDEV;
    return UniqueFd();
  }
  UniqueFd current;
  size_t start = 0;
  while (path.size() - start > kMaxResolved) {
    size_t cut = path.rfind('/', start + kMaxResolved);
    if (cut == std::string::npos || cut <= start) {
      errno = ENAMETOOLONG;  // one component longer than any file system takes
      return UniqueFd();
    }
    std::string piece = path.substr(start, cut - start);
    // O_PATH|O_NOFOLLOW gives the piece's last component itself, a symlink too: it is told
    // apart here (ELOOP, as for a symlink anywhere else), never followed.
    UniqueFd next(OpenAt2(current ? current.get() : dirfd, piece.c_str(), O_PATH, 0));
    if (!next && errno == ENOSYS) return WalkBeneath(dirfd, path, flags, mode);
    if (!next) return UniqueFd();
    struct stat st;
    if (fstat(next.get(), &st) != 0) return UniqueFd();
    if (!S_ISDIR(st.st_mode)) {
      errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      return UniqueFd();
    }
    current = std::move(next);
    start = path.find_first_not_of('/', cut);
    if (start == std::string::npos) start = path.size();
  }
  std::string last = start < path.size() ? path.substr(start) : ".";
  return UniqueFd(OpenAt2(current.get(), last.c_str(), flags, mode));
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
