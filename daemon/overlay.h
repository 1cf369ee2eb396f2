#pragma once
/// Mounting and unmounting one root's overlay with mount(2) (never mount(8): it is slow and
/// parses options we would have to escape). The lower is passed as /proc/self/fd/N of a
/// directory fd we already validated, so no path is resolved twice and no comma or colon in a
/// user's directory name can inject mount options.

#include <string>

namespace sandboxd {

struct OverlaySpec {
  int lower_fd = -1;       ///< O_PATH directory fd of the live root
  std::string upper;       ///< our upper dir (safe characters only)
  std::string work;        ///< our work dir, same file system as upper
  std::string merged;      ///< mount point
  /// Marks in user.overlay.* rather than trusted.overlay.*: for a mount inside a user
  /// namespace of one's own (user mode), where trusted.* cannot be written.
  bool user_xattr = false;
};

/// Where overlayfs keeps its marks (opaque, origin, nlink) in the upper layers this process
/// reads: "trusted.overlay." for the daemon's own mounts as root, "user.overlay." for an
/// unprivileged daemon (user mode), whose jobs mount with user_xattr.
const char* OverlayXattrPrefix();

/// Mounts with index=on (hard links stay one inode on copy-up), redirect_dir=off and
/// metacopy=off (the upper then holds whole entries only, so the change set can be read from
/// it alone), nosuid and nodev. Falls back to index=off where the file systems cannot index.
/// Throws Error(kFailed) naming the merged dir.
void MountOverlay(const OverlaySpec& spec);

/// Unmounts `merged`; already unmounted is fine. Throws Error(kBusy) if it is busy.
void UnmountOverlay(const std::string& merged);

/// Detaches `merged` (MNT_DETACH): it leaves the namespace now and the overlay goes when its
/// last user does. For a sandbox that is gone; already unmounted is fine.
void DetachOverlay(const std::string& merged);

/// True when an overlay is mounted exactly at `merged`.
bool IsOverlayMounted(const std::string& merged);

}  // namespace sandboxd
