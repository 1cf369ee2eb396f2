#pragma once
/// Counted slots per user: how many of something a user holds at once (running jobs), checked
/// and taken in one step so that concurrent calls of one user cannot pass a limit together.

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <mutex>

namespace sandboxd {

class UserSlots {
 public:
  /// Takes one of `uid`'s slots if it holds fewer than `most`; false otherwise.
  bool TryTake(uid_t uid, size_t most) {
    std::lock_guard lock(mutex_);
    size_t& held = held_[uid];
    if (held >= most) return false;
    ++held;
    return true;
  }
  /// Gives one back.
  void Give(uid_t uid) {
    std::lock_guard lock(mutex_);
    auto it = held_.find(uid);
    if (it == held_.end()) return;
    if (--it->second == 0) held_.erase(it);
  }
  size_t Held(uid_t uid) const {
    std::lock_guard lock(mutex_);
    auto it = held_.find(uid);
    return it == held_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<uid_t, size_t> held_;
};

}  // namespace sandboxd
