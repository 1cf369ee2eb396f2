#include "jobs/upper_watch.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "runtime/background_close.h"
#include "base/beneath.h"
#include "base/directory_listing.h"
#include "base/errors.h"
#include "jobs/inotify_shares.h"

namespace sandboxd {
namespace {

/// What makes a path worth a look: made, written (IN_MODIFY: while a long write goes on; the
/// kernel folds repeats into the event at the queue's tail), closed after writing, its mode or
/// links changed, removed, renamed. IN_EXCL_UNLINK: nothing from files already unlinked.
constexpr uint32_t kEvents = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                             IN_ONLYDIR | IN_EXCL_UNLINK;

/// In the merged view: a file closed after writing (every other change shows on the upper).
constexpr uint32_t kMergedEvents = IN_CLOSE_WRITE | IN_ONLYDIR | IN_EXCL_UNLINK;

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

}  // namespace

UpperWatch::UpperWatch(int upper_dirfd, uid_t owner, int64_t since_ns, const std::function<void(const std::string& path)>& fresh,
                       int merged_dirfd)
    : owner_(owner),
      upper_(fcntl(upper_dirfd, F_DUPFD_CLOEXEC, 0)),
      merged_(merged_dirfd >= 0 ? fcntl(merged_dirfd, F_DUPFD_CLOEXEC, 0) : -1),
      inotify_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
  if (!upper_) ThrowErrno("cannot hold the sandbox's upper layer");
  if (merged_dirfd >= 0 && !merged_) ThrowErrno("cannot hold the sandbox's merged view");
  if (!inotify_) ThrowErrno("cannot follow the sandbox's upper layer (inotify)");
  InotifyShares& shares = InotifyShares::Daemon();
  if (!shares.TakeInstance(owner_)) {
    inotify_.reset();
    throw Error(Code::kBusy, "too many layers are followed live at once: at most " + std::to_string(shares.user_instances()) +
                                 " of uid " + std::to_string(owner_) + "'s and " + std::to_string(shares.most_instances()) +
                                 " in all (a quarter of a quarter of fs.inotify.max_user_instances, and a quarter)");
  }
  WatchTree(upper_.get(), "", fresh ? &fresh : nullptr, since_ns);
}

UpperWatch::~UpperWatch() {
  if (!inotify_) return;
  InotifyShares::Daemon().GiveWatches(owner_, dirs_.size());
  InotifyShares::Daemon().GiveInstance(owner_);
  // Its last close waits for an SRCU grace period (5-15 ms here), and a feed ends as its job
  // does, before the job's end is announced: closed on another thread.
  CloseInBackground(std::move(inotify_));
}

void UpperWatch::Watch(int dir, const std::string& path, uint32_t events) {
  InotifyShares& shares = InotifyShares::Daemon();
  if (!shares.TakeWatch(owner_)) {
    lost_ = partial_ = true;  // the owner's share of the daemon's watches is spent: this one goes unseen
    return;
  }
  // By the fd's /proc name: the directory opened (beneath the layer, no symlinks), whatever is
  // at its path by now.
  std::string self = "/proc/self/fd/" + std::to_string(dir);
  int wd = inotify_add_watch(inotify_.get(), self.c_str(), events);
  if (wd < 0) {
    shares.GiveWatches(owner_, 1);
    lost_ = partial_ = true;  // ENOSPC: the kernel's limit on watches; what happens in there goes unseen
    return;
  }
  // A moved directory keeps its watch: its new path, and the watch taken again is given back.
  if (!dirs_.insert_or_assign(wd, path).second) shares.GiveWatches(owner_, 1);
}

void UpperWatch::WatchMerged(const std::string& path) {
  if (!merged_) return;
  // Looked up by the path the upper has it at, beneath the merged view's root without
  // following a symlink: a job that swaps the name meanwhile has its closes told under the
  // name (each told path is looked at again, never trusted).
  UniqueFd dir = path.empty() ? UniqueFd(fcntl(merged_.get(), F_DUPFD_CLOEXEC, 0)) : OpenBeneath(merged_.get(), path, O_PATH | O_DIRECTORY);
  if (!dir) return;  // gone meanwhile
  Watch(dir.get(), path, kMergedEvents);
}

void UpperWatch::WatchTree(int dir, const std::string& path, const std::function<void(const std::string&)>* seen,
                           int64_t fresh_since_ns) {
  // Depth first with a stack of its own: a job can nest directories deeper than a thread's
  // stack would take.
  std::vector<std::pair<UniqueFd, std::string>> pending;
  pending.emplace_back(UniqueFd(fcntl(dir, F_DUPFD_CLOEXEC, 0)), path);
  while (!pending.empty()) {
    auto [fd, where] = std::move(pending.back());
    pending.pop_back();
    if (!fd) continue;
    Watch(fd.get(), where, kEvents);
    WatchMerged(where);
    DirectoryListing listing = DirectoryListing::Of(fd.get());
    if (!listing) continue;  // gone meanwhile
    // Watched before it is listed: what changes in it from now on is an event, what changed
    // before shows in its mtime.
    bool tell = seen != nullptr;
    if (tell && fresh_since_ns > 0) {
      struct stat st;
      tell = fstat(fd.get(), &st) == 0 && int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec >= fresh_since_ns;
    }
    while (const dirent* entry = listing.Next()) {
      std::string child = Join(where, entry->d_name);
      if (tell) (*seen)(child);
      if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
      UniqueFd sub(openat(fd.get(), entry->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub) pending.emplace_back(std::move(sub), std::move(child));
    }
  }
}

void UpperWatch::Drain(const std::function<void(const std::string& path, uint32_t mask)>& seen) {
  alignas(inotify_event) char buffer[64 * 1024];
  for (;;) {
    ssize_t got = read(inotify_.get(), buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: nothing more queued
    }
    for (char* at = buffer; at < buffer + got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      at += sizeof(inotify_event) + event->len;
      if (event->mask & IN_Q_OVERFLOW) {
        lost_ = true;
        continue;
      }
      if (event->mask & IN_IGNORED) {
        if (dirs_.erase(event->wd)) InotifyShares::Daemon().GiveWatches(owner_, 1);
        continue;
      }
      auto dir = dirs_.find(event->wd);
      if (dir == dirs_.end()) continue;
      if (event->len == 0) {
        // The directory itself: its entries say more, and its parent's watch names it. The
        // layer's top has no parent: its own mode or owner changed ("." as the scan calls it).
        if (dir->second.empty() && (event->mask & IN_ATTRIB)) seen(".", event->mask);
        continue;
      }
      std::string path = Join(dir->second, event->name);
      seen(path, event->mask);
      if ((event->mask & IN_ISDIR) && (event->mask & (IN_CREATE | IN_MOVED_TO))) {
        UniqueFd sub = OpenBeneath(upper_.get(), path, O_PATH | O_DIRECTORY);
        std::function<void(const std::string&)> beneath = [&](const std::string& found) { seen(found, 0); };
        if (sub) WatchTree(sub.get(), path, &beneath);
      }
    }
  }
}

bool UpperWatch::TakeLost() { return std::exchange(lost_, false); }

}  // namespace sandboxd
