#pragma once
/// Opening paths beneath a directory fd without ever following a symlink and without ever
/// leaving that directory: openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS),
/// or an O_NOFOLLOW walk one component at a time where openat2 is missing. A path of any
/// length: one longer than a syscall takes (PATH_MAX) is resolved a piece at a time, never
/// whole. Commit and diff reach users' files only through these.

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>

#include "unique_fd.h"

namespace sandboxd {

/// Refuses (Error kInvalidPath) an absolute path, "..", empty or "." components. "." alone is
/// allowed and names the directory itself.
void CheckRelativePath(const std::string& path);

/// {"a/b", "c"} for "a/b/c"; {".", "c"} for "c".
std::pair<std::string, std::string> SplitParent(const std::string& path);

/// Opens `path` beneath `dirfd`. A symlink anywhere on the way, the last component included,
/// fails with ELOOP (errno is set, the fd is invalid); so does an escape with EXDEV, and so
/// does any '..' in a path longer than PATH_MAX (or where openat2 is missing).
UniqueFd OpenBeneath(int dirfd, const std::string& path, int flags, mode_t mode = 0);

/// The parent directories of many paths beneath one root, opened (O_PATH) as OpenBeneath does,
/// each reused while the next path has the same parent: passes over a change set, sorted by
/// path, open each directory about once instead of once per entry, with one fd held at a time.
/// Only for a tree that does not change during the pass (the sandbox held exclusively).
class ParentDirs {
 public:
  explicit ParentDirs(int root_fd) : root_fd_(root_fd) {}
  int root() const { return root_fd_; }
  /// The directory holding `path` (as SplitParent splits it), or -1 with errno set; `name`
  /// receives the last component.
  int Open(const std::string& path, std::string& name);
  /// Drops the directory held: the next Open resolves its path afresh (after a step that moved
  /// or replaced a directory, the one held may no longer be at its path).
  void Forget() { tried_ = false; fd_.reset(); }

 private:
  int root_fd_;
  bool tried_ = false;
  std::string parent_;
  UniqueFd fd_;
  int error_ = 0;
};

/// lstat of `path` ("." is the root itself) beneath the root, never through a symlink: nothing
/// when it is missing or a parent is not a plain directory; Error naming the path on any other
/// failure.
std::optional<struct stat> StatBeneath(ParentDirs& dirs, const std::string& path);
std::optional<struct stat> StatBeneath(int root_fd, const std::string& path);

}  // namespace sandboxd
