#include "base/overlay.h"
#include "changes/conflict_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

#include "base/beneath.h"
#include "base/errors.h"
#include "sandbox/live_sight.h"

namespace sandboxd {
namespace {

/// The head of the file handle overlayfs keeps in trusted.overlay.origin of a copied-up entry
/// (struct ovl_fb in the kernel's fs/overlayfs/overlayfs.h); the file system's own handle
/// follows it.
struct OverlayOriginHead {
  uint8_t version;
  uint8_t magic;  ///< 0xfb
  uint8_t len;    ///< this head and the handle after it
  uint8_t flags;
  uint8_t type;   ///< the handle's type, as name_to_handle_at gives it
  uint8_t uuid[16];
} __attribute__((packed));

/// Whether entries of the upper are copies of live entries that have since gone from the live
/// tree. overlayfs records where a copied-up entry came from as a file handle; one that no
/// longer opens (ESTALE), or opens with no link left (held in memory), is an inode the live tree
/// deleted. One that still has a name may have been moved by the sandbox itself: a job renamed
/// it, and its live name is then a change of the sandbox, which the live tree still holds as
/// the sandbox saw it (its sight; or it has none yet, while the job runs). Any other name it has
/// is not in the live tree where the sandbox saw it: the owner moved it, only a commit's backup
/// holds it, or it is the other name of a hard link the owner unlinked this one from (which
/// moved that name's ctime). When unsure (another error, a handle not understood) it counts as
/// gone: refusing is safe. An entry made by a job (no origin), or a symlink (which cannot be
/// opened to read its origin), is not a copy.
class LiveOrigins {
 public:
  /// `changes`: the root's change set, sorted (the sandbox's own moves are among them);
  /// `sights`: their sights, by path (live_sight.h).
  LiveOrigins(int live_fd, int upper_fd, MovedInodes moved) : live_fd_(live_fd), uppers_(upper_fd), moved_(std::move(moved)) {}
  bool Gone(const std::string& path);

 private:
  bool MovedBySandbox(dev_t dev, ino_t ino);

  int live_fd_;
  ParentDirs uppers_;
  MovedInodes moved_;
  std::optional<std::set<Inode>> moved_inodes_;  ///< read when first asked
};

int64_t CtimeNs(const struct stat& st) { return int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec; }

bool LiveOrigins::MovedBySandbox(dev_t dev, ino_t ino) {
  if (!moved_inodes_) moved_inodes_ = moved_();
  return moved_inodes_->count({dev, ino}) > 0;
}

bool LiveOrigins::Gone(const std::string& path) {
  std::string name;
  int parent = uppers_.Open(path, name);
  if (parent < 0) return false;
  // Opened for reading (non-blocking, for a fifo): xattr calls through /proc/self/fd of an O_PATH
  // fd would act on the magic link itself. A symlink cannot be opened; it is not checked.
  UniqueFd entry(openat(parent, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (!entry) return false;
  std::vector<uint8_t> origin(256);
  ssize_t size = fgetxattr(entry.get(), (std::string(OverlayXattrPrefix()) + "origin").c_str(), origin.data(), origin.size());
  if (size < 0) return false;  // no origin: made in the sandbox
  OverlayOriginHead head;
  if (static_cast<size_t>(size) < sizeof head) return true;  // unreadable: assume the worst
  memcpy(&head, origin.data(), sizeof head);
  size_t handle_bytes = static_cast<size_t>(size) - sizeof head;
  if (head.magic != 0xfb || head.len != size || handle_bytes == 0) return true;
  std::vector<uint8_t> buffer(sizeof(struct file_handle) + handle_bytes);
  auto* handle = reinterpret_cast<struct file_handle*>(buffer.data());
  handle->handle_bytes = static_cast<unsigned>(handle_bytes);
  handle->handle_type = head.type;
  memcpy(handle->f_handle, origin.data() + sizeof head, handle_bytes);
  // open_by_handle_at refuses an O_PATH descriptor of the file system (EBADF).
  UniqueFd file_system(openat(live_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!file_system) return true;
  UniqueFd still(open_by_handle_at(file_system.get(), handle, O_PATH | O_CLOEXEC));
  if (!still) return true;
  // An inode deleted from the live tree still opens by handle while anything holds it (the
  // overlay's own cached lower dentry does): a deleted one has no name left.
  struct stat st;
  return fstat(still.get(), &st) != 0 || st.st_nlink == 0 || !MovedBySandbox(st.st_dev, st.st_ino);
}

}  // namespace

void AddMovedInode(const UserCredentials& owner, int live_fd, const Change& change, const std::string* sight, std::set<Inode>& moved) {
  auto live = StatLive(owner, live_fd, change.path);
  if (!live || S_ISDIR(live->st_mode)) return;
  if (!sight || *sight == SightOf(live)) moved.insert({live->st_dev, live->st_ino});
}

std::vector<ConflictCandidate> FindConflictCandidates(const UserCredentials& owner, int live_fd, int upper_fd,
                                                      const std::vector<Change>& changes,
                                                      const std::map<std::string, std::string>& sights, int64_t since_ns,
                                                      const MovedInodes& moved) {
  std::vector<ConflictCandidate> found;
  ParentDirs lives(live_fd), uppers(upper_fd);  // changes come sorted: one open per directory
  // Whether the live entry may already hold exactly what the sandbox holds (then its content
  // is compared): a file of the same mode (a live chmod is a change the commit would undo), or
  // a symlink.
  auto same_kind = [](const struct stat& live, const struct stat& upper) {
    return (S_ISREG(live.st_mode) && S_ISREG(upper.st_mode) && (live.st_mode & 07777) == (upper.st_mode & 07777)) ||
           (S_ISLNK(live.st_mode) && S_ISLNK(upper.st_mode));
  };
  auto comparable = [&](const std::string& path, const std::optional<struct stat>& live) {
    auto upper = StatBeneath(uppers, path);
    return live && upper && same_kind(*live, *upper);
  };
  LiveOrigins origins(live_fd, upper_fd, moved ? moved : MovedInodes([&] {
    std::set<Inode> inodes;
    for (const auto& change : changes) {
      auto sight = sights.find(change.path);
      AddMovedInode(owner, live_fd, change, sight == sights.end() ? nullptr : &sight->second, inodes);
    }
    return inodes;
  }));
  // The live side as the owner sees it (live_sight.h), a batch at a time: what they cannot look
  // up is no entry, at the sight and now alike, so no conflict tells what only root can see.
  constexpr size_t kLiveBatch = 1024;
  std::vector<std::optional<struct stat>> lives_now;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (i % kLiveBatch == 0)
      lives_now = StatLiveEach(owner, lives, std::min(kLiveBatch, changes.size() - i),
                               [&](size_t j) -> const std::string& { return changes[i + j].path; });
    const Change& change = changes[i];
    if (change.path == ".") continue;
    const std::optional<struct stat>& live = lives_now[i % kLiveBatch];
    if (auto sight = sights.find(change.path); sight != sights.end()) {
      if (sight->second == kUnseen) {
        found.push_back({change.path, "changed in the live tree after the sandbox read it", comparable(change.path, live)});
        continue;
      }
      std::string now = SightOf(live);  // the live entry as stat'ed just now
      if (now == sight->second) continue;
      std::string why = now == "-"             ? "deleted from the live tree"
                        : sight->second == "-" ? "made in the live tree"
                                               : "changed in the live tree";
      found.push_back({change.path, why, comparable(change.path, live)});
      continue;
    }
    if (!live) {
      if (change.kind == ChangeKind::kAdded && origins.Gone(change.path))
        found.push_back({change.path, "deleted from the live tree", false});
      continue;
    }
    if (S_ISDIR(live->st_mode)) continue;
    if (CtimeNs(*live) < since_ns) continue;  // since_ns is on a file clock tick (file_clock.h)
    found.push_back({change.path, "changed in the live tree", comparable(change.path, live)});
  }
  return found;
}

}  // namespace sandboxd
