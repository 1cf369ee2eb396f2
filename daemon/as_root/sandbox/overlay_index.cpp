#include "sandbox/overlay_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/directory_listing.h"
#include "unique_fd.h"

namespace sandboxd {

size_t ForgetDeadIndexEntries(int index_fd, bool orphans) {
  DirectoryListing listing = DirectoryListing::Of(index_fd);
  if (!listing) return 0;
  std::vector<std::string> dead;
  while (const dirent* entry = listing.Next()) {
    // Version 0, magic 0xfb: an index entry. Others (overlayfs's "#…" temporary files and the
    // whiteout it links every new whiteout to) are its own.
    if (strncmp(entry->d_name, "00fb", 4) != 0) continue;
    // After each job only whiteouts count: the entry's type from the listing spares a stat of
    // every copied-up file's entry (there is one per file the sandbox changed).
    if (!orphans && entry->d_type != DT_CHR && entry->d_type != DT_UNKNOWN) continue;
    struct stat st;
    if (fstatat(listing.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode)) continue;
    bool whiteout = S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
    if (whiteout || (orphans && st.st_nlink == 1)) dead.emplace_back(entry->d_name);
  }
  size_t removed = 0;
  for (const auto& name : dead)
    if (unlinkat(listing.fd(), name.c_str(), 0) == 0) ++removed;
  return removed;
}

}  // namespace sandboxd
