#pragma once
/// Hard quotas (DESIGN: a sandbox's quota is a hard limit where the storage allows it). A
/// sandbox created with a quota keeps its layers (upper, work and the stages of its commits) in
/// an ext4 file system of its own: a sparse image file, root's and mode 0600 in the root-only
/// state directory (STATE/quota/<id>.img), on a loop device (loop_device.h), mounted by the
/// daemon at STATE/quota/<id>. A job's write past the quota then fails inside the job with
/// ENOSPC, as on a full disk; nothing written before is lost, and what the owner deletes makes
/// room again. The image is written only by the kernel on the daemon's behalf: the owner can
/// neither reach nor shape it.
///
/// The file system is made larger than the quota (ext4's own metadata, and room for what
/// commits keep there for undo) and a root-owned reserve file takes up the difference, so that
/// the owner can always write exactly the quota less what the upper layers hold. Fit() sizes
/// the reserve again whenever the sandbox is set up (after every commit, undo, discard, resume
/// and restart), growing the image (offline, with resize2fs) when what commits keep has eaten
/// the headroom. The image is sparse and the file system mounted with discard: the host
/// stores what the layers hold, not the quota, and the blocks are charged to root (the image's
/// owner), never to another user.
///
/// ProbeQuotaLayers says at start-up whether this host can do it (loop devices, ext4,
/// mkfs.ext4); where it cannot, quotas are polled and the job that exceeds one is stopped.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace sandboxd {

/// The largest quota an image can be made for: more than 8 TiB would not fit in an ext4 file
/// (16 TiB at most) with its headroom.
inline constexpr uint64_t kMaxQuotaLayerBytes = uint64_t{8} << 40;

/// Refuses (kInvalidArgument) a quota a caller asked for that is larger than a quota layer can
/// be, or, with `hard_quotas`, than the file system of `state_dir` holds (a larger image limits
/// nothing).
void CheckQuotaCanBeMade(uint64_t quota_bytes, bool hard_quotas, const std::string& state_dir);

/// Tries a small image in `dir` (made and removed). Returns "" when quota layers work here,
/// else why not.
std::string ProbeQuotaLayers(const std::string& dir);

class QuotaLayer {
 public:
  /// `image` the image file, `mount_point` where it is mounted; `quota_bytes` what the upper
  /// layers may hold; `owner` whom the image is charged to (its file's owner: the host's disk
  /// quotas count it against them, not root; it stays in a directory only root may enter).
  QuotaLayer(std::string image, std::string mount_point, uint64_t quota_bytes, uid_t owner = 0)
      : image_(std::move(image)), mount_point_(std::move(mount_point)), quota_bytes_(quota_bytes), owner_(owner) {}

  /// Makes the image when there is none and mounts it where it is not mounted. Throws
  /// Error(kFailed).
  void Mount() const;
  /// With the file system mounted and no overlay over it: sizes the reserve so that exactly
  /// `quota - upper_bytes` is free, growing the image when that needs more than it has.
  /// Returns "" or, when the room could not be made exact, a line for the log.
  std::string Fit(uint64_t upper_bytes) const;
  /// Frees the reserve (while no job runs: a commit, an undo or a discard may need the room for
  /// its stage); the next Fit() takes it back.
  void FreeReserve() const;
  /// Unmounts the file system; not mounted is fine. Throws Error(kBusy) while it is in use.
  void Unmount() const;
  /// Unmounts the file system (detaching it if in use) and deletes the image: for a sandbox
  /// that is gone. Missing is fine.
  void Remove() const;

  bool mounted() const;
  /// Where the sandbox's layers are kept inside the mounted file system.
  std::string layers_dir() const { return LayersDirIn(mount_point_); }
  /// The same for the file system mounted at `mount_point`.
  static std::string LayersDirIn(const std::string& mount_point) { return mount_point + "/layers"; }
  const std::string& image() const { return image_; }

 private:
  std::string reserve() const { return mount_point_ + "/reserve"; }
  void Make() const;
  /// Makes the image `more` bytes larger (unmounted, and served by no loop device); false when
  /// it is still in use somewhere.
  bool Grow(uint64_t more) const;

  std::string image_;
  std::string mount_point_;
  uint64_t quota_bytes_;
  uid_t owner_;
};

}  // namespace sandboxd
