#include "sandbox/overlay_mounts.h"

namespace sandboxd {
namespace {

class KernelMounts final : public OverlayMounts {
 public:
  void Mount(const OverlaySpec& spec) override { MountOverlay(spec); }
  void Unmount(const std::string& merged) override { UnmountOverlay(merged); }
  void Detach(const std::string& merged) override { DetachOverlay(merged); }
  bool IsMounted(const std::string& merged) override { return IsOverlayMounted(merged); }
};

}  // namespace

OverlayMounts& KernelOverlayMounts() {
  static KernelMounts mounts;
  return mounts;
}

}  // namespace sandboxd
