#pragma once
/// A loop device serving one image file, attached with the loop driver's own ioctls (never
/// losetup(8)): the block device a sandbox's size-limited file system is mounted from
/// (quota_layer.h). The device is attached with LO_FLAGS_AUTOCLEAR, so it frees itself when its
/// last user goes: once the file system on it is unmounted everywhere (a job's mount namespace
/// included), nothing is left to detach, and a daemon that dies leaks no device. This object,
/// holding the device open, is one such user: while it lives the device stays.

#include <string>

#include "unique_fd.h"

namespace sandboxd {

class LoopDevice {
 public:
  /// The loop device serving `image` already, when one does: a mount of the image that
  /// outlived its unmount for a moment in some job's mount namespace still holds it, and the
  /// image must then be mounted from that same device (the kernel shares its superblock), never
  /// from a second one (two ext4 instances writing one image would corrupt it). Else a free
  /// device, attached to the image. Throws Error(kFailed).
  static LoopDevice Attach(const std::string& image);
  /// The loop device serving `image`, if any (open), else an object that is not valid().
  static LoopDevice Serving(const std::string& image);

  bool valid() const { return fd_.valid(); }
  const std::string& path() const { return path_; }

 private:
  LoopDevice(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}

  UniqueFd fd_;
  std::string path_;
};

}  // namespace sandboxd
