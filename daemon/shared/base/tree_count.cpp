#include "base/tree_count.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "base/directory_listing.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

/// Adds what is beneath the directory open at `dir`, a directory at a time by name (never a
/// whole path, which a deep tree makes longer than a syscall takes; never through a symlink).
void CountBeneath(int dir, TreeCount& count) {
  DirectoryListing listing = DirectoryListing::Of(dir);
  while (const dirent* entry = listing.Next()) {
    struct stat st;
    if (fstatat(dir, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    ++count.entries;
    if (S_ISREG(st.st_mode)) count.bytes += static_cast<uint64_t>(st.st_size);
    if (!S_ISDIR(st.st_mode)) continue;
    UniqueFd child(openat(dir, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (child) CountBeneath(child.get(), count);
  }
}

}  // namespace

TreeCount CountTree(const std::string& top) {
  TreeCount count{.entries = 1};
  UniqueFd dir(open(top.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir) CountBeneath(dir.get(), count);
  return count;
}

}  // namespace sandboxd
