#include "conflict_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <optional>

#include "beneath.h"
#include "errors.h"

namespace sandboxd {
namespace {

std::optional<struct stat> StatBeneath(int root, const std::string& path) {
  struct stat st;
  if (path == ".") {
    if (fstat(root, &st) != 0) ThrowErrno("cannot stat a root");
    return st;
  }
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(root, parent_path, O_PATH | O_DIRECTORY);
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return st;
}

/// overlayfs records where a copied-up entry came from in trusted.overlay.origin.
bool WasCopiedUp(int upper_root, const std::string& path) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(upper_root, parent_path, O_PATH | O_DIRECTORY);
  if (!parent) return false;
  // Opened for reading (non-blocking, for a fifo): xattr calls through /proc/self/fd of an O_PATH
  // fd would act on the magic link itself. A symlink cannot be opened; it is not checked.
  UniqueFd entry(openat(parent.get(), name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (!entry) return false;
  return fgetxattr(entry.get(), "trusted.overlay.origin", nullptr, 0) >= 0;
}

int64_t CtimeNs(const struct stat& st) { return int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec; }

}  // namespace

std::vector<ConflictCandidate> FindConflictCandidates(int live_fd, int upper_fd, const std::vector<Change>& changes,
                                                      int64_t since_ns) {
  std::vector<ConflictCandidate> found;
  for (const auto& change : changes) {
    if (change.path == ".") continue;
    auto live = StatBeneath(live_fd, change.path);
    if (!live) {
      if (change.kind == ChangeKind::kAdded && WasCopiedUp(upper_fd, change.path))
        found.push_back({change.path, "deleted from the live tree", false});
      continue;
    }
    if (S_ISDIR(live->st_mode)) continue;
    if (CtimeNs(*live) <= since_ns) continue;
    auto upper = StatBeneath(upper_fd, change.path);
    bool comparable = upper && ((S_ISREG(live->st_mode) && S_ISREG(upper->st_mode)) ||
                                (S_ISLNK(live->st_mode) && S_ISLNK(upper->st_mode)));
    found.push_back({change.path, "changed in the live tree", comparable});
  }
  return found;
}

}  // namespace sandboxd
