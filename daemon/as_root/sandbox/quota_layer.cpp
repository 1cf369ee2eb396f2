#include "sandbox/quota_layer.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>

#include "base/errors.h"
#include "unique_fd.h"
#include "base/fs_util.h"
#include "base/process.h"
#include "sandbox/loop_device.h"
#include "units.h"

namespace sandboxd {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

/// Room beyond the quota for what commits keep in the image (their stages: what went live,
/// for undo). More is made by growing the image when it runs out.
uint64_t Headroom(uint64_t quota) { return std::min(quota, uint64_t{1} << 30); }

std::string FindTool(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/sbin/", "/usr/bin/", "/bin/"})
    if (access((dir + name).c_str(), X_OK) == 0) return dir + name;
  return "";
}

/// Runs an e2fsprogs tool with a fixed environment (its input is ours alone: a path in the
/// state directory and numbers).
void RunTool(const std::string& name, std::vector<std::string> args) {
  std::string path = FindTool(name);
  if (path.empty()) throw Error(Code::kFailed, name + " (e2fsprogs) is not installed");
  SpawnOptions options;
  options.path = path;
  options.argv = {path};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"};
  options.die_with_parent = true;
  RunResult result = RunAndCapture(options, "");
  if (result.status != 0) {
    while (!result.err.empty() && result.err.back() == '\n') result.err.pop_back();
    throw Error(Code::kFailed, name + " failed (exit status " + std::to_string(ExitStatusFromWaitStatus(result.status)) +
                                   ")" + (result.err.empty() ? "" : ": " + result.err));
  }
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

std::string ProbeQuotaLayers(const std::string& dir) {
  if (access("/dev/loop-control", F_OK) != 0) return "there is no /dev/loop-control (loop devices)";
  if (FindTool("mkfs.ext4").empty()) return "mkfs.ext4 (e2fsprogs) is not installed";
  QuotaLayer probe(dir + "/probe.img", dir + "/probe", kMiB);
  try {
    probe.Remove();  // what a probe cut off left
    probe.Mount();
    probe.Remove();
  } catch (const std::exception& e) {
    try {
      probe.Remove();
    } catch (...) {
    }
    return e.what();
  }
  return "";
}

bool QuotaLayer::mounted() const {
  struct statfs fs;
  if (statfs(mount_point_.c_str(), &fs) != 0 || fs.f_type != EXT4_SUPER_MAGIC) return false;
  struct stat here, parent;
  if (stat(mount_point_.c_str(), &here) != 0 || stat(Parent(mount_point_).c_str(), &parent) != 0) return false;
  return here.st_dev != parent.st_dev;
}

void QuotaLayer::Make() const {
  // Sized for the quota, the headroom and ext4's own metadata (journal, inode tables); the
  // reserve takes what is left over. Made under another name and renamed when whole, so that
  // a daemon killed meanwhile leaves no half-made image to mount.
  uint64_t wanted = quota_bytes_ + Headroom(quota_bytes_);
  uint64_t size = (wanted + wanted / 16 + 64 * kMiB + kMiB - 1) / kMiB * kMiB;
  std::string made = image_ + ".new";
  unlink(made.c_str());
  {
    UniqueFd file(open(made.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file) ThrowErrno("cannot create " + made);
    if (ftruncate(file.get(), static_cast<off_t>(size)) != 0) ThrowErrno("cannot size " + made);
    if (fchown(file.get(), owner_, static_cast<gid_t>(-1)) != 0) ThrowErrno("cannot charge " + made + " to uid " + std::to_string(owner_));
  }
  // One inode per 8 KiB (many small files hit the quota, not the inode count); inodes of 256
  // bytes hold overlayfs's attributes inline; nothing kept for root (the owner's writes are
  // made without CAP_SYS_RESOURCE); the inode tables and the journal are not zeroed (the
  // image is sparse, and stays so).
  RunTool("mkfs.ext4", {"-q", "-F", "-m", "0", "-b", "4096", "-i", "8192", "-I", "256", "-L", "sandboxd",
                        "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", made});
  if (rename(made.c_str(), image_.c_str()) != 0) ThrowErrno("cannot rename " + made);
}

void QuotaLayer::Mount() const {
  if (mounted()) return;
  MakeDirectory(Parent(mount_point_), 0700);
  if (access(image_.c_str(), F_OK) != 0) Make();
  // (One made before images were charged to their owners is charged now.)
  else if (struct stat st; stat(image_.c_str(), &st) == 0 && st.st_uid != owner_ && chown(image_.c_str(), owner_, static_cast<gid_t>(-1)) != 0)
    ThrowErrno("cannot charge " + image_ + " to uid " + std::to_string(owner_));
  MakeDirectory(mount_point_, 0700);
  LoopDevice device = LoopDevice::Attach(image_);
  // discard: what is deleted in the file system is punched out of the image, so the host keeps
  // only what the layers hold. noinit_itable: the kernel does not zero the inode tables in the
  // background (which would fill the sparse image).
  if (mount(device.path().c_str(), mount_point_.c_str(), "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME,
            "discard,noinit_itable,errors=remount-ro") != 0)
    ThrowErrno("cannot mount " + image_ + " (on " + device.path() + ") at " + mount_point_);
  try {
    // The file system's root: root's alone, like every directory of the state.
    if (chmod(mount_point_.c_str(), 0700) != 0) ThrowErrno("cannot set the mode of " + mount_point_);
    MakeDirectory(layers_dir(), 0700);
  } catch (...) {
    umount2(mount_point_.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH);
    throw;
  }
}

std::string QuotaLayer::Fit(uint64_t upper_bytes) const {
  for (int attempt = 0;; ++attempt) {
    struct statvfs vfs;
    if (statvfs(mount_point_.c_str(), &vfs) != 0) ThrowErrno("cannot stat " + mount_point_);
    uint64_t free = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    UniqueFd file(open(reserve().c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file) ThrowErrno("cannot open " + reserve());
    struct stat st;
    if (fstat(file.get(), &st) != 0) ThrowErrno("cannot stat " + reserve());
    uint64_t held = static_cast<uint64_t>(st.st_blocks) * 512;
    uint64_t room = quota_bytes_ > upper_bytes ? quota_bytes_ - upper_bytes : 0;
    if (held + free >= room) {
      uint64_t target = (held + free - room) / 4096 * 4096;
      // Made afresh: a reserve of unwritten extents costs the image its block bitmaps only.
      if (ftruncate(file.get(), 0) != 0) ThrowErrno("cannot empty " + reserve());
      // The extent tree takes a block now and then: a little less then, never an error.
      for (uint64_t less = 0; target > less; less += kMiB) {
        if (fallocate(file.get(), 0, 0, static_cast<off_t>(target - less)) == 0) return "";
        if (errno != ENOSPC) ThrowErrno("cannot size " + reserve());
      }
      return "";
    }
    // What commits keep ate the headroom: the image grows, unmounted (ext4 grows online only
    // with CAP_SYS_RESOURCE, which the daemon may not have).
    if (attempt > 0) return "the layers of " + image_ + " cannot be given their whole quota";
    if (ftruncate(file.get(), 0) != 0) ThrowErrno("cannot empty " + reserve());
    file.reset();
    Unmount();
    bool grown = false;
    try {
      grown = Grow(room - held - free + Headroom(quota_bytes_));
    } catch (...) {
      Mount();
      throw;
    }
    Mount();
    if (!grown) return "cannot grow " + image_ + " now (it is still mounted in a job's namespace); its room is short of its quota until the next commit";
  }
}

bool QuotaLayer::Grow(uint64_t more) const {
  // Served by a loop device still (a job's mount namespace that has not gone yet), the file
  // system is live: resize2fs must never touch it. The device goes a moment after the unmount.
  for (int waited = 0; LoopDevice::Serving(image_).valid(); waited += 50) {
    if (waited >= 2000) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  struct stat st;
  if (stat(image_.c_str(), &st) != 0) ThrowErrno("cannot stat " + image_);
  uint64_t size = (static_cast<uint64_t>(st.st_size) + more + kMiB - 1) / kMiB * kMiB;
  if (truncate(image_.c_str(), static_cast<off_t>(size)) != 0) ThrowErrno("cannot grow " + image_);
  // -f: the file system was just unmounted cleanly by us; no e2fsck -f first.
  RunTool("resize2fs", {"-f", image_});
  return true;
}

void QuotaLayer::FreeReserve() const {
  if (!mounted()) return;
  if (truncate(reserve().c_str(), 0) != 0 && errno != ENOENT) ThrowErrno("cannot empty " + reserve());
}

void QuotaLayer::Unmount() const {
  if (!mounted()) return;
  if (umount2(mount_point_.c_str(), UMOUNT_NOFOLLOW) == 0 || errno == EINVAL || errno == ENOENT) return;
  if (errno == EBUSY) throw Error(Code::kBusy, "the layers at " + mount_point_ + " are still in use");
  ThrowErrno("cannot unmount " + mount_point_);
}

void QuotaLayer::Remove() const {
  if (mounted() && umount2(mount_point_.c_str(), UMOUNT_NOFOLLOW | MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    ThrowErrno("cannot detach " + mount_point_);
  // Unmounted, the mount point is a plain directory of ours (empty but for what a failed
  // set-up left).
  if (!mounted()) RemoveTree(mount_point_);
  for (const auto& file : {image_, image_ + ".new"})
    if (unlink(file.c_str()) != 0 && errno != ENOENT) ThrowErrno("cannot remove " + file);
}

void CheckQuotaCanBeMade(uint64_t quota_bytes, bool hard_quotas, const std::string& state_dir) {
  // The quota comes from the caller: a hard one is an image of that size, which must fit in an
  // ext4 file and mean something on the disk that holds it.
  uint64_t most = kMaxQuotaLayerBytes;
  std::string what = units::HumanBytes(kMaxQuotaLayerBytes) + ", the most a sandbox's quota can be";
  struct statvfs disk;
  if (hard_quotas && statvfs(state_dir.c_str(), &disk) == 0 && static_cast<uint64_t>(disk.f_blocks) * disk.f_frsize < most) {
    most = static_cast<uint64_t>(disk.f_blocks) * disk.f_frsize;
    what = "the file system that holds the sandboxes' changes (" + units::HumanBytes(most) + ")";
  }
  if (quota_bytes > most)
    throw Error(Code::kInvalidArgument, "a quota of " + units::HumanBytes(quota_bytes) + " is larger than " + what +
                                            "; ask for at most " + units::HumanBytes(most));
}

}  // namespace sandboxd
