#include "base/overlay.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <thread>
#include <tuple>
#include <cstring>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "unique_fd.h"
#include "base/files_as_owner.h"
#include "base/process.h"

namespace sandboxd {
namespace {

/// How long a mount waits for its layers to be released by an earlier mount of them, and an
/// unmount for the view to be let go.
constexpr std::chrono::milliseconds kBusyLayerWait{5000};

/// Repeats `attempt` (which returns 0 or an errno) while it fails with EBUSY, pausing 10 ms and
/// then twice as long each time (at most 500 ms), for kBusyLayerWait in all; returns the last
/// outcome, `first` being the outcome of the attempt already made.
template <typename Attempt>
int WhileBusy(int first, Attempt&& attempt) {
  int err = first;
  for (auto pause = std::chrono::milliseconds(10), waited = std::chrono::milliseconds(0);
       err == EBUSY && waited < kBusyLayerWait; waited += pause, pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    std::this_thread::sleep_for(pause);
    err = attempt();
  }
  return err;
}

/// One option of the overlay's: a string value, or a flag when `value` is null.
using Option = std::pair<const char*, const char*>;

/// In a child that shares the daemon's memory and fd table (CloneSharingMemory): takes the
/// owner's file-system identity with every capability but CAP_SYS_RESOURCE (files_as_owner.h)
/// and creates the superblock, which records these credentials for all overlayfs does on its
/// layers.
struct CreateArgs {
  int context;
  const UserCredentials* owner;
  int err;  ///< 0, or the errno that failed
};

int CreateInChild(void* raw) {
  auto& args = *static_cast<CreateArgs*>(raw);
  args.err = ActForFilesAs(*args.owner, kEveryCapability);
  if (args.err == 0 && syscall(SYS_fsconfig, args.context, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    args.err = errno;
  _exit(0);
}

/// Creates the superblock of `context`, recording the owner's file identity when there is one.
/// Returns 0 or an errno.
int CreateSuperblock(int context, const UserCredentials* owner) {
  if (owner == nullptr || geteuid() != 0)
    return fsconfig(context, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0 ? 0 : errno;
  CreateArgs args{context, owner, 0};
  pid_t pid = CloneSharingMemory(CreateInChild, &args, CLONE_FILES);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (args.err == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) return EIO;
  return args.err;
}

/// What the kernel wrote to the context's message queue about a failure ("overlayfs: ..."),
/// for the error we report: errno alone rarely says which option or layer it was.
std::string KernelMessages(int context) {
  std::string said;
  char line[512];
  for (ssize_t n; (n = read(context, line, sizeof line - 1)) > 0;) {
    if (!said.empty()) said += "; ";
    said.append(line, static_cast<size_t>(n));
  }
  return said;
}

/// One attempt to mount `spec` with `options`. Returns 0 or an errno, with what the kernel said.
std::pair<int, std::string> TryMount(const OverlaySpec& spec, const std::vector<Option>& options) {
  UniqueFd context(fsopen("overlay", FSOPEN_CLOEXEC));
  if (!context) return {errno, ""};
  for (const auto& [key, value] : options) {
    int done = value == nullptr ? fsconfig(context.get(), FSCONFIG_SET_FLAG, key, nullptr, 0)
                                : fsconfig(context.get(), FSCONFIG_SET_STRING, key, value, 0);
    if (done != 0) {
      int err = errno;
      return {err, KernelMessages(context.get())};
    }
  }
  if (int err = CreateSuperblock(context.get(), spec.owner); err != 0) return {err, KernelMessages(context.get())};
  UniqueFd mount(fsmount(context.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
  if (!mount) return {errno, KernelMessages(context.get())};
  if (move_mount(mount.get(), "", AT_FDCWD, spec.merged.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) return {errno, ""};
  return {0, ""};
}

}  // namespace

void MountOverlay(const OverlaySpec& spec) {
  std::string lower = "/proc/self/fd/" + std::to_string(spec.lower_fd);
  std::vector<Option> options = {{"source", "overlay"},
                                 {"lowerdir", lower.c_str()},
                                 {"upperdir", spec.upper.c_str()},
                                 {"workdir", spec.work.c_str()},
                                 {"metacopy", "off"}};
  if (spec.user_xattr) {
    // userxattr refuses to follow redirects (the kernel reads "off" as "follow"). A mount in
    // the owner's own user namespace works with the owner's credentials: nothing to check.
    options.insert(options.end(), {{"redirect_dir", "nofollow"}, {"userxattr", nullptr}});
    options.push_back({"index", "on"});
    if (TryMount(spec, options).first == 0) return;
    options.back() = {"index", "off"};
  } else {
    // No fallback without the check: a root whose file systems cannot give file handles is
    // refused rather than shown with root's view of whatever is swapped into it.
    options.insert(options.end(), {{"redirect_dir", "off"}, {"index", "on"}, {"nfs_export", "on"}});
  }
  // Not a structured binding: a lambda may not capture one before C++20's P1091 (clang 14).
  int err;
  std::string said;
  std::tie(err, said) = TryMount(spec, options);
  // overlayfs lets one superblock at a time use an upper and work dir (index=on). The one this
  // sandbox had may outlive its unmount for a moment: a copy of it made into another job's new
  // mount namespace goes only once that namespace is set up and the unmount has propagated to
  // it. So a busy layer is waited for, up to a few seconds, and then refused: never mounted
  // twice (which index=off would allow).
  err = WhileBusy(err, [&] {
    std::tie(err, said) = TryMount(spec, options);
    return err;
  });
  if (err == 0) return;
  if (err == EBUSY)
    throw Error(Code::kBusy, "the layers of " + spec.merged + " are still in use by an earlier mount of them; try again");
  // overlayfs recorded the lower root's file handle at the first mount (index=on).
  if (err == ESTALE)
    throw Error(Code::kInvalidState, "the live directory below " + spec.merged + " is not the one its layer was made over");
  ThrowErrno(err, "cannot mount the overlay at " + spec.merged + (said.empty() ? "" : " (" + said + ")"));
}

const char* OverlayXattrPrefix() { return geteuid() == 0 ? "trusted.overlay." : "user.overlay."; }

void UnmountOverlay(const std::string& merged) {
  if (!IsOverlayMounted(merged)) return;
  auto unmount = [&] { return umount2(merged.c_str(), UMOUNT_NOFOLLOW) == 0 ? 0 : errno; };
  // A job that just ended leaves its copy of the view in a mount namespace the kernel tears
  // down a moment later, and until then the view counts as busy (its mount is shared with that
  // copy). The load test saw a commit right after a job refused so, about once in 200: busy is
  // waited out as a mount waits out its layers, and only then refused.
  int err = WhileBusy(unmount(), unmount);
  if (err == 0) return;
  if (err == EBUSY) throw Error(Code::kBusy, "the overlay at " + merged + " is still in use");
  if (err == EINVAL || err == ENOENT) return;
  ThrowErrno(err, "cannot unmount " + merged);
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
