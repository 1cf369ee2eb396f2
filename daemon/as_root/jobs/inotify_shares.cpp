#include "jobs/inotify_shares.h"

#include <algorithm>
#include <fstream>
#include <string>

namespace sandboxd {
namespace {

/// A quarter of the kernel's per-user inotify limit `name` (fs.inotify.*), or `fallback`.
size_t QuarterOfLimit(const char* name, size_t fallback) {
  std::ifstream in(std::string("/proc/sys/fs/inotify/") + name);
  size_t limit = 0;
  return in >> limit && limit >= 4 ? limit / 4 : fallback;
}

}  // namespace

InotifyShares& InotifyShares::Daemon() {
  static InotifyShares shares(QuarterOfLimit("max_user_instances", 32), QuarterOfLimit("max_user_watches", 16384));
  return shares;
}

InotifyShares::InotifyShares(size_t most_instances, size_t most_watches)
    : most_instances_(most_instances),
      most_watches_(most_watches),
      user_instances_(std::max<size_t>(1, most_instances / 4)),
      user_watches_(std::max<size_t>(1, most_watches / 4)) {}

bool InotifyShares::Take(uid_t user, size_t Held::*kind, size_t most, size_t user_most) {
  std::lock_guard lock(mutex_);
  Held& held = users_[user];
  if (total_.*kind >= most || held.*kind >= user_most) return false;
  ++(total_.*kind);
  ++(held.*kind);
  return true;
}

size_t InotifyShares::FreeInstances(uid_t user) {
  std::lock_guard lock(mutex_);
  auto held = users_.find(user);
  size_t mine = held == users_.end() ? 0 : held->second.instances;
  return std::min(most_instances_ - std::min(most_instances_, total_.instances), user_instances_ - std::min(user_instances_, mine));
}

size_t InotifyShares::UserFreeInstances(uid_t user) {
  std::lock_guard lock(mutex_);
  auto held = users_.find(user);
  return user_instances_ - std::min(user_instances_, held == users_.end() ? size_t{0} : held->second.instances);
}

void InotifyShares::Give(uid_t user, size_t Held::*kind, size_t count) {
  std::lock_guard lock(mutex_);
  Held& held = users_[user];
  count = std::min(count, held.*kind);
  held.*kind -= count;
  total_.*kind -= count;
  if (held.instances == 0 && held.watches == 0) users_.erase(user);
}

bool InotifyShares::TakeInstance(uid_t user) { return Take(user, &Held::instances, most_instances_, user_instances_); }
void InotifyShares::GiveInstance(uid_t user) { Give(user, &Held::instances, 1); }
bool InotifyShares::TakeWatch(uid_t user) { return Take(user, &Held::watches, most_watches_, user_watches_); }
void InotifyShares::GiveWatches(uid_t user, size_t count) { Give(user, &Held::watches, count); }

}  // namespace sandboxd
