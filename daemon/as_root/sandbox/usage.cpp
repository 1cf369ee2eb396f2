#include "sandbox/usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "base/directory_listing.h"
#include "base/errors.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

class Measurer {
 public:
  TreeUsage usage;

  void Directory(int dir) {
    // Gone meanwhile (a job or commit may be changing it): counted as empty.
    std::vector<std::string> names = DirectoryListing::Of(dir).Names();
    for (const auto& name : names) {
      struct stat st;
      if (fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      ++usage.entries;
      if (st.st_nlink <= 1 || S_ISDIR(st.st_mode) || seen_.insert({st.st_dev, st.st_ino}).second)
        usage.bytes += static_cast<uint64_t>(st.st_blocks) * 512;
      if (!S_ISDIR(st.st_mode)) continue;
      UniqueFd child(openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (child) Directory(child.get());
    }
  }

 private:
  std::set<std::pair<dev_t, ino_t>> seen_;
};

uint64_t FileBytes(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
}

}  // namespace

TreeUsage MeasureTree(const std::string& path) {
  UniqueFd top(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!top) return {};
  Measurer measurer;
  measurer.Directory(top.get());
  return measurer.usage;
}

uint64_t ChangesBytes(const Sandbox& sandbox) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) bytes += MeasureTree(sandbox.paths().UpperDir(i)).bytes;
  return bytes;
}

SandboxUsage MeasureSandbox(const Sandbox& sandbox) {
  SandboxUsage usage;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    TreeUsage upper = MeasureTree(sandbox.paths().UpperDir(i));
    usage.changes.bytes += upper.bytes;
    usage.changes.entries += upper.entries;
    usage.archive_bytes += FileBytes(sandbox.paths().ArchivePath(i));
  }
  for (const auto& dir : sandbox.paths().StorageDirs()) usage.kept_bytes += MeasureTree(dir + "/commits").bytes;
  // Unmounted (suspended), a hard quota's file system holds only what its commits keep (the
  // stages, for undo): its image's blocks are that cost on the host.
  if (sandbox.hard_quota() && !sandbox.quota_layer().mounted()) usage.kept_bytes += FileBytes(sandbox.quota_layer().image());
  return usage;
}

}  // namespace sandboxd
