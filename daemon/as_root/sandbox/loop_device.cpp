#include "sandbox/loop_device.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"
#include "base/fs_util.h"

namespace sandboxd {
namespace {

/// Whether the open loop device `fd` is backed by the file `image` is (same device and inode).
bool Backs(int fd, const struct stat& image) {
  loop_info64 info{};
  if (ioctl(fd, LOOP_GET_STATUS64, &info) != 0) return false;  // ENXIO: not attached
  return info.lo_device == image.st_dev && info.lo_inode == image.st_ino;
}

}  // namespace

LoopDevice LoopDevice::Serving(const std::string& image) {
  struct stat st;
  if (stat(image.c_str(), &st) != 0) return LoopDevice(UniqueFd(), "");
  // Only attached devices have a loop/ directory in sysfs; each is checked once open, since it
  // may be cleared (and even reused) between the listing and the open.
  for (const auto& name : ListDirectory("/sys/block")) {
    if (name.rfind("loop", 0) != 0 || access(("/sys/block/" + name + "/loop").c_str(), F_OK) != 0) continue;
    std::string path = "/dev/" + name;
    UniqueFd fd(open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (fd && Backs(fd.get(), st)) return LoopDevice(std::move(fd), path);
  }
  return LoopDevice(UniqueFd(), "");
}

LoopDevice LoopDevice::Attach(const std::string& image) {
  if (LoopDevice serving = Serving(image); serving.valid()) return serving;
  UniqueFd file(open(image.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!file) ThrowErrno("cannot open " + image);
  UniqueFd control(open("/dev/loop-control", O_RDWR | O_CLOEXEC));
  if (!control) ThrowErrno("cannot open /dev/loop-control");
  // Another process may take the free device between the question and the attach: ask again.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int number = ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (number < 0) ThrowErrno("no free loop device for " + image);
    std::string path = "/dev/loop" + std::to_string(number);
    UniqueFd device(open(path.c_str(), O_RDWR | O_CLOEXEC));
    if (!device) ThrowErrno("cannot open " + path);
    loop_config config{};
    config.fd = static_cast<__u32>(file.get());
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    strncpy(reinterpret_cast<char*>(config.info.lo_file_name), image.c_str(), LO_NAME_SIZE - 1);
    if (ioctl(device.get(), LOOP_CONFIGURE, &config) == 0) return LoopDevice(std::move(device), path);
    if (errno != EBUSY) ThrowErrno("cannot attach " + image + " to " + path);
  }
  throw Error(Code::kFailed, "cannot attach " + image + " to a loop device: every free one was taken meanwhile");
}

}  // namespace sandboxd
