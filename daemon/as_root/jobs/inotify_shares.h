#pragma once
/// Who may spend the kernel's inotify limits on the live feed (upper_watch.h). The limits are
/// per user: in system mode root's, shared with every other service that runs as root. The
/// daemon takes at most a quarter of fs.inotify.max_user_instances and of max_user_watches, and
/// each user whose jobs it follows at most a quarter of that: one user's sandboxes cannot take
/// the feed from everyone else's (issue 40). Thread-safe.

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <mutex>

namespace sandboxd {

class InotifyShares {
 public:
  /// The daemon's, from the kernel's limits.
  static InotifyShares& Daemon();

  /// `most_instances` and `most_watches`: the daemon's share; each user's is a quarter of it.
  InotifyShares(size_t most_instances, size_t most_watches);

  /// Takes one inotify instance for `user`; false (nothing taken) past the daemon's share or
  /// the user's.
  bool TakeInstance(uid_t user);
  void GiveInstance(uid_t user);
  /// How many more instances `user` could take now: within the daemon's share and theirs.
  size_t FreeInstances(uid_t user);
  /// Within their own share alone.
  size_t UserFreeInstances(uid_t user);
  /// Takes one watch for `user`; false (nothing taken) past the daemon's share or the user's.
  bool TakeWatch(uid_t user);
  void GiveWatches(uid_t user, size_t count);

  size_t most_instances() const { return most_instances_; }
  size_t user_instances() const { return user_instances_; }

 private:
  struct Held {
    size_t instances = 0;
    size_t watches = 0;
  };
  /// Takes one of `kind` for `user` within `most` in all and `user_most` of theirs.
  bool Take(uid_t user, size_t Held::*kind, size_t most, size_t user_most);
  /// Gives back up to `count` of `kind` that `user` holds.
  void Give(uid_t user, size_t Held::*kind, size_t count);

  const size_t most_instances_, most_watches_;
  const size_t user_instances_, user_watches_;
  std::mutex mutex_;
  Held total_;
  std::map<uid_t, Held> users_;
};

}  // namespace sandboxd
