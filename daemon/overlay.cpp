#include "overlay.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>

#include "errors.h"

namespace sandboxd {

void MountOverlay(const OverlaySpec& spec) {
  std::string base = "lowerdir=/proc/self/fd/" + std::to_string(spec.lower_fd) + ",upperdir=" + spec.upper +
                     ",workdir=" + spec.work + ",metacopy=off" +
                     // userxattr refuses to follow redirects (the kernel reads "off" as "follow").
                     (spec.user_xattr ? ",redirect_dir=nofollow,userxattr" : ",redirect_dir=off");
  unsigned long flags = MS_NOSUID | MS_NODEV;
  if (mount("overlay", spec.merged.c_str(), "overlay", flags, (base + ",index=on").c_str()) == 0) return;
  int first = errno;
  if (mount("overlay", spec.merged.c_str(), "overlay", flags, (base + ",index=off").c_str()) == 0) return;
  ThrowErrno(first, "cannot mount the overlay at " + spec.merged);
}

const char* OverlayXattrPrefix() { return geteuid() == 0 ? "trusted.overlay." : "user.overlay."; }

void UnmountOverlay(const std::string& merged) {
  if (!IsOverlayMounted(merged)) return;
  if (umount2(merged.c_str(), UMOUNT_NOFOLLOW) == 0) return;
  if (errno == EBUSY) throw Error(Code::kBusy, "the overlay at " + merged + " is still in use");
  if (errno == EINVAL || errno == ENOENT) return;
  ThrowErrno("cannot unmount " + merged);
}

void DetachOverlay(const std::string& merged) {
  if (!IsOverlayMounted(merged)) return;
  if (umount2(merged.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH) == 0 || errno == EINVAL || errno == ENOENT) return;
  ThrowErrno("cannot detach " + merged);
}

bool IsOverlayMounted(const std::string& merged) {
  struct statfs fs;
  if (statfs(merged.c_str(), &fs) != 0) return false;
  if (fs.f_type != OVERLAYFS_SUPER_MAGIC) return false;
  // The mount point itself must be the overlay root, not a directory inside some overlay.
  struct stat here, parent;
  if (stat(merged.c_str(), &here) != 0 || stat((merged + "/..").c_str(), &parent) != 0) return false;
  return here.st_dev != parent.st_dev;
}

}  // namespace sandboxd
