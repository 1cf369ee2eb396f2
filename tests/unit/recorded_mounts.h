#pragma once
/// RecordedMounts: overlay mounts that only remember what was asked (sandbox/overlay_mounts.h).
/// A sandbox's merged views are then plain directories; its layers are real, so everything
/// that works on the layers and the live tree (scans, commits, suspension, removal) runs as in
/// the daemon, unprivileged.

#include <mutex>
#include <set>
#include <string>

#include "sandbox/overlay_mounts.h"

namespace sandboxd::testing {

class RecordedMounts final : public OverlayMounts {
 public:
  void Mount(const OverlaySpec& spec) override {
    std::lock_guard lock(mutex_);
    mounted_.insert(spec.merged);
    ++mounts_;
  }
  void Unmount(const std::string& merged) override {
    std::lock_guard lock(mutex_);
    mounted_.erase(merged);
  }
  void Detach(const std::string& merged) override { Unmount(merged); }
  bool IsMounted(const std::string& merged) override {
    std::lock_guard lock(mutex_);
    return mounted_.count(merged) != 0;
  }

  std::set<std::string> mounted() const {
    std::lock_guard lock(mutex_);
    return mounted_;
  }
  int mounts() const {
    std::lock_guard lock(mutex_);
    return mounts_;
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> mounted_;
  int mounts_ = 0;
};

}  // namespace sandboxd::testing
