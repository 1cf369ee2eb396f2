#pragma once
/// Where sandboxes' overlays are mounted: the kernel's mount table in sandboxd
/// (KernelOverlayMounts, base/overlay.h), a record of what was asked in unit tests
/// (tests/unit/recorded_mounts.h), so that a sandbox's life (create, recover, commit, suspend,
/// destroy) runs there without privilege: its layers are plain directories, and its merged
/// views directories no job runs in.

#include <string>

#include "base/overlay.h"

namespace sandboxd {

class OverlayMounts {
 public:
  virtual ~OverlayMounts() = default;
  /// As MountOverlay: throws Error(kInvalidState) for a lower that is not the one the upper was
  /// first mounted over, Error(kFailed) otherwise.
  virtual void Mount(const OverlaySpec& spec) = 0;
  /// As UnmountOverlay: already unmounted is fine; Error(kBusy) when busy.
  virtual void Unmount(const std::string& merged) = 0;
  /// As DetachOverlay.
  virtual void Detach(const std::string& merged) = 0;
  virtual bool IsMounted(const std::string& merged) = 0;
};

/// The kernel's overlays (base/overlay.h); one for the whole process.
OverlayMounts& KernelOverlayMounts();

}  // namespace sandboxd
