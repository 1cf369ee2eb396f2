#include "sandbox/hard_links.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/directory_listing.h"
#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

using Inode = std::pair<dev_t, ino_t>;
using Visit = std::function<bool(const std::string& path, const struct stat& st)>;

/// Calls `visit` with the path (relative to the walk's start) and lstat of every regular file
/// beneath directory `dir`, on file system `dev` only, never through a symlink; stops as soon as
/// `visit` returns false (and returns false then). What vanishes or cannot be read meanwhile is
/// passed over: the live tree may change under the walk.
bool WalkFiles(int dir, const std::string& path, dev_t dev, const Visit& visit) {
  DirectoryListing listing = DirectoryListing::Of(dir);
  if (!listing) return true;
  while (const dirent* entry = listing.Next()) {
    std::string child = path.empty() ? entry->d_name : path + "/" + entry->d_name;
    struct stat st;
    if (fstatat(listing.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != dev) continue;
    if (S_ISREG(st.st_mode) && !visit(child, st)) return false;
    if (!S_ISDIR(st.st_mode)) continue;
    UniqueFd sub(openat(listing.fd(), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub && !WalkFiles(sub.get(), child, dev, visit)) return false;
  }
  return true;
}

bool WalkFiles(int root, const Visit& visit) {
  struct stat st;
  if (fstat(root, &st) != 0) ThrowErrno("cannot stat a root");
  return WalkFiles(root, "", st.st_dev, visit);
}

}  // namespace

std::vector<std::string> LinkUpHardLinks(int live_fd, int upper_fd, int merged_fd, const std::vector<Change>& changes,
                                         const std::set<std::string>* multi_linked) {
  // The changed files with more than one link in the upper (a copy-up in the index has two: its
  // name and the index's), and how many of their names the change set holds.
  std::map<Inode, std::pair<std::string, nlink_t>> upper_names;  // inode → {a name, how many}
  // Live inodes one name of which a job removed: overlayfs copies such an inode up into its
  // index before it whites the name out (to keep its link count), and from then on the merged
  // view shows the copy under the other names, which no longer follow the live file.
  std::map<Inode, nlink_t> unlinked;  // live inode → its other names
  ParentDirs uppers(upper_fd), lives(live_fd);  // changes come sorted: one open per directory
  for (const auto& change : changes) {
    if (change.kind == ChangeKind::kDeleted && change.old_type == EntryType::kFile) {
      auto live = StatBeneath(lives, change.path);
      if (live && S_ISREG(live->st_mode) && live->st_nlink > 1) unlinked[{live->st_dev, live->st_ino}] = live->st_nlink - 1;
      continue;
    }
    if (change.kind == ChangeKind::kDeleted || change.new_type != EntryType::kFile) continue;
    if (multi_linked && !multi_linked->count(change.path)) continue;  // one link: nothing to link up
    auto st = StatBeneath(uppers, change.path);
    if (!st || !S_ISREG(st->st_mode) || st->st_nlink < 2) continue;
    // Most files changed in place had one name live: nothing to link up (and the live side is
    // cheaper to ask than the merged view). A file added in the sandbox with links is a copy-up
    // that was renamed, or linked by the job: the merged view tells.
    if (change.kind != ChangeKind::kAdded) {
      auto live = StatBeneath(lives, change.path);
      if (live && live->st_nlink < 2) continue;
    }
    auto [it, added] = upper_names.try_emplace({st->st_dev, st->st_ino}, change.path, 0);
    ++it->second.second;
  }
  // The merged view counts every name of the inode (overlayfs keeps that count for a copy-up
  // in the index); the ones the upper lacks are live names not linked up yet. Known by the
  // merged view's inode: the same under every name of one inode.
  std::map<std::string, nlink_t> counted;  // a name of each → how many, in path order
  for (const auto& [inode, names] : upper_names) counted.insert(names);
  std::map<Inode, nlink_t> missing;
  ParentDirs merged_dirs(merged_fd);
  for (const auto& [path, names] : counted) {
    auto merged = StatBeneath(merged_dirs, path);
    if (merged && S_ISREG(merged->st_mode) && merged->st_nlink > names)
      missing[{merged->st_dev, merged->st_ino}] = merged->st_nlink - names;
  }
  std::vector<std::string> linked;
  if (missing.empty() && unlinked.empty()) return linked;
  WalkFiles(live_fd, [&](const std::string& path, const struct stat& live) {
    if (live.st_nlink < 2 || StatBeneath(upper_fd, path)) return true;  // one name only, or the upper has its own
    auto merged = StatBeneath(merged_fd, path);
    if (!merged || !S_ISREG(merged->st_mode)) return true;
    auto it = missing.find({merged->st_dev, merged->st_ino});
    auto other = unlinked.find({live.st_dev, live.st_ino});
    if (it == missing.end() && other == unlinked.end()) return true;
    UniqueFd linked_up = OpenBeneath(merged_fd, path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (!linked_up) {
      if (errno == ETXTBSY) return true;  // a job runs it; the next call links it up
      ThrowErrno("cannot give " + path + " its place in the sandbox beside its other names");
    }
    linked.push_back(path);
    if (it != missing.end() && --it->second == 0) missing.erase(it);
    if (other != unlinked.end() && --other->second == 0) unlinked.erase(other);
    return !missing.empty() || !unlinked.empty();
  });
  return linked;
}

}  // namespace sandboxd
