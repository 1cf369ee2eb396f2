#pragma once
/// Opening paths beneath a directory fd without ever following a symlink and without ever
/// leaving that directory: openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS),
/// or an O_NOFOLLOW walk one component at a time where openat2 is missing. Commit and diff
/// reach users' files only through these.

#include <sys/types.h>

#include <string>
#include <utility>

#include "fd.h"

namespace sandboxd {

/// Refuses (Error kInvalidPath) an absolute path, "..", empty or "." components. "." alone is
/// allowed and names the directory itself.
void CheckRelativePath(const std::string& path);

/// {"a/b", "c"} for "a/b/c"; {".", "c"} for "c".
std::pair<std::string, std::string> SplitParent(const std::string& path);

/// Opens `path` beneath `dirfd`. A symlink anywhere on the way, the last component included,
/// fails with ELOOP (errno is set, the fd is invalid); so does an escape with EXDEV.
UniqueFd OpenBeneath(int dirfd, const std::string& path, int flags, mode_t mode = 0);

}  // namespace sandboxd
