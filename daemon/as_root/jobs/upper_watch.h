#pragma once
/// Follows one upper layer with inotify: every directory of it is watched, directories that
/// appear are watched as they appear (and what they already hold is seen), and each event
/// comes out as the path it names, relative to the layer. A job's writes go through overlayfs
/// to the upper's own inodes, so the layer's watches see them in either mode (the daemon's
/// overlay or a user-mode job's own). What the live change feed (change_feed.h) reads.
///
/// The layer is the job's to shape: directories are opened beneath it without following a
/// symlink, and a watch is added through the opened fd, never by a path the job could swap.
/// Nor may a job spend the kernel's inotify limits, which are per user: root's in system mode,
/// shared with every other service that runs as root. Each watch is charged to the layer's
/// owner within the daemon's share (inotify_shares.h); past the owner's share a layer is
/// followed in part (lossy) or not at all, and other users' layers are not affected.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "unique_fd.h"

namespace sandboxd {

class UpperWatch {
 public:
  /// Watches every directory beneath `upper_dirfd` (duplicated: the caller keeps its own).
  /// Throws Error when inotify cannot be had at all; a directory that cannot be watched (the
  /// kernel's limit on watches) only marks the watch lossy. The walk may run beside a job that
  /// already writes: the entries of each directory modified at or after `since_ns` (its mtime;
  /// file_clock.h) go to `fresh`, as what may have changed before its watch was in place.
  ///
  /// With `merged_dirfd` (the root of the sandbox's mounted overlay), each directory is also
  /// watched in the merged view for files closed after writing: overlayfs tells nothing on the
  /// upper of a file already there that is opened, mapped, written through the mapping and
  /// closed (its own file on the upper is opened unwatchable), so only the merged view sees it.
  UpperWatch(int upper_dirfd, uid_t owner, int64_t since_ns, const std::function<void(const std::string& path)>& fresh,
             int merged_dirfd = -1);

  /// The inotify fd, to poll for readability.
  int fd() const { return inotify_.get(); }

  /// Reads every event queued now (never blocks) and hands out the path each names with the
  /// event's inotify mask (a path may come more than once; 0: found beneath a directory that
  /// appeared). A directory that appeared is watched, and what is beneath it is handed out too
  /// (it may have been filled before its watch was in place).
  void Drain(const std::function<void(const std::string& path, uint32_t mask)>& seen);

  /// Whether events were lost since the last Drain's caller asked (the kernel's queue
  /// overflowed, or a directory could not be watched): paths changed that were not handed out.
  /// Asking clears it.
  bool TakeLost();
  /// Whether some directory is not watched (a watch could not be had): changes in it are never
  /// seen, so the watch never tells the whole of what changed. Stays so.
  bool partial() const { return partial_; }

  ~UpperWatch();
  UpperWatch(const UpperWatch&) = delete;
  UpperWatch& operator=(const UpperWatch&) = delete;

  /// How many directories are watched.
  size_t watched() const { return dirs_.size(); }

 private:
  /// Watches `dir` (an fd of it, O_PATH or not) named `path` ("" for the layer itself) and
  /// every directory beneath it, handing each entry found to `seen` (if set).
  /// With `fresh_since_ns`, only the entries of directories modified since then go to `seen`.
  void WatchTree(int dir, const std::string& path, const std::function<void(const std::string&)>* seen, int64_t fresh_since_ns = 0);
  /// Watches the one directory `dir` named `path` for `events`.
  void Watch(int dir, const std::string& path, uint32_t events);
  /// The same directory in the merged view, for files closed after writing (when there is one).
  void WatchMerged(const std::string& path);

  uid_t owner_;  ///< whose share of the kernel's inotify limits it spends
  UniqueFd upper_;
  UniqueFd merged_;  ///< none: only the upper is watched
  UniqueFd inotify_;
  std::unordered_map<int, std::string> dirs_;  ///< watch descriptor → its directory's path
  bool lost_ = false;
  bool partial_ = false;
};

}  // namespace sandboxd
