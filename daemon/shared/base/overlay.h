#pragma once
/// Mounting and unmounting one root's overlay with the mount API (fsopen, fsconfig, fsmount;
/// never mount(8): it is slow and parses options we would have to escape). The lower is passed
/// as /proc/self/fd/N of a directory fd we already validated, so no path is resolved twice and
/// no comma or colon in a user's directory name can inject mount options.

#include <string>

#include "base/credentials.h"

namespace sandboxd {

struct OverlaySpec {
  int lower_fd = -1;       ///< O_PATH directory fd of the live root
  std::string upper;       ///< our upper dir (safe characters only)
  std::string work;        ///< our work dir, same file system as upper
  std::string merged;      ///< mount point
  /// Marks in user.overlay.* rather than trusted.overlay.*: for a mount inside a user
  /// namespace of one's own (user mode), where trusted.* cannot be written.
  bool user_xattr = false;
  /// Whose the overlay's own work is (see MountOverlay); null: the mounter's (a probe, or user
  /// mode, where the mounter is the owner already).
  const UserCredentials* owner = nullptr;
};

/// Where overlayfs keeps its marks (opaque, origin, nlink) in the upper layers this process
/// reads: "trusted.overlay." for the daemon's own mounts as root, "user.overlay." for an
/// unprivileged daemon (user mode), whose jobs mount with user_xattr.
const char* OverlayXattrPrefix();

/// Mounts with index=on (hard links stay one inode on copy-up), redirect_dir=off and
/// metacopy=off (the upper then holds whole entries only, so the change set can be read from
/// it alone), nosuid and nodev.
///
/// overlayfs does its own reads of the lower and writes of the upper with the credentials of
/// whoever created the mount, recorded then. Two rules of the contract follow:
///  - writes are charged to the owner: the superblock is created by a child whose file-system
///    uid, gid and groups are the owner's (spec.owner), so ext4's blocks kept for root and
///    disk quotas see the owner (overlayfs itself gives up CAP_SYS_RESOURCE; so do we);
///  - a job sees nothing its owner could not list: the recorded credentials keep root's
///    DAC capabilities (overlayfs makes its work dir mode 0 and needs them there), so a lower
///    directory is trusted only if it is the one the upper copied: nfs_export=on makes
///    overlayfs check each merged directory's lower against the file handle recorded at copy-up
///    (trusted.overlay.origin) and not merge one swapped into its place in the live tree.
/// Where the file systems cannot give file handles that check cannot be made, and the mount is
/// refused. User mode (user_xattr) falls back to index=off: its mounts are the owner's own.
/// Throws Error(kInvalidState) when the lower is not the directory the upper was first mounted
/// over (replaced in the live tree), else Error(kFailed) naming the merged dir, with what the
/// kernel said.
void MountOverlay(const OverlaySpec& spec);

/// Unmounts `merged`; already unmounted is fine. Throws Error(kBusy) if it is busy.
void UnmountOverlay(const std::string& merged);

/// Detaches `merged` (MNT_DETACH): it leaves the namespace now and the overlay goes when its
/// last user does. For a sandbox that is gone; already unmounted is fine.
void DetachOverlay(const std::string& merged);

/// True when an overlay is mounted exactly at `merged`.
bool IsOverlayMounted(const std::string& merged);

}  // namespace sandboxd
