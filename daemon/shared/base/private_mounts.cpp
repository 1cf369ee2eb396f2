#include "base/private_mounts.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// A path as /proc/self/mountinfo writes it: space, tab, newline and backslash as \ooo.
std::string UnescapeMountPath(const std::string& field) {
  std::string path;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && std::isdigit(static_cast<unsigned char>(field[i + 1]))) {
      path += static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      path += field[i];
    }
  }
  return path;
}

/// The host's root directory, opened before the daemon left the host's namespace; -1 until.
int host_root = -1;

/// Whether the mount at / is shared (a "shared:N" among its optional fields).
bool RootIsShared() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
    }
    if (field != "/") continue;
    for (std::string optional; fields >> optional && optional != "-";)
      if (optional.rfind("shared:", 0) == 0) return true;
  }
  return false;
}

/// How many threads this process has.
size_t ThreadCount() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return 0;
  size_t count = 0;
  while (dirent* entry = readdir(tasks))
    if (entry->d_name[0] != '.') ++count;
  closedir(tasks);
  return count;
}

}  // namespace

void DetachMountsBelow(const std::string& dir) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::vector<std::string> below;
  const std::string prefix = dir + "/";
  for (std::string line; std::getline(mountinfo, line);) {
    // "ID PARENT MAJ:MIN ROOT MOUNT-POINT ...": the fifth field.
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
    }
    std::string point = UnescapeMountPath(field);
    if (point.compare(0, prefix.size(), prefix) == 0) below.push_back(point);
  }
  // Deepest first (a longer path is never the parent of a shorter one); one that is gone
  // already (detached with its parent) is fine.
  std::sort(below.begin(), below.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& point : below)
    if (umount2(point.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL && errno != ENOENT)
      ThrowErrno("cannot detach " + point + ", which an earlier sandboxd mounted in the host's namespace");
}

bool EnterOwnMountNamespace() {
  // unshare(CLONE_NEWNS) moves the calling thread alone: a thread started before would go on
  // mounting in the host's namespace.
  if (size_t threads = ThreadCount(); threads != 1)
    throw Error(Code::kFailed, "cannot make a mount namespace of sandboxd's own with " + std::to_string(threads) + " threads running");
  // Where nothing made the host's mounts shared (no systemd: a container), they are made so, as
  // systemd does at boot: a file system mounted later (a root on it) then reaches the slave.
  const bool shared = RootIsShared() || mount(nullptr, "/", nullptr, MS_REC | MS_SHARED, nullptr) == 0;
  host_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (host_root < 0) ThrowErrno("cannot open the host's root directory");
  if (unshare(CLONE_NEWNS) != 0) ThrowErrno("cannot make a mount namespace of sandboxd's own");
  // A slave: a file system the host mounts later (a root on it) is seen here, where the host's
  // mounts are shared; nothing mounted here reaches the host.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) ThrowErrno("cannot make sandboxd's mount namespace a slave of the host's");
  return shared;
}

bool HostSeesTheSame(const std::string& canonical, dev_t dev, ino_t ino) {
  if (host_root < 0) return true;
  // Looked up from the host's root, through the host's mounts; as root, only to compare.
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(syscall(SYS_openat2, host_root, canonical.c_str(), &how, sizeof how));
  if (fd < 0) return false;
  struct stat st;
  bool same = fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
  close(fd);
  return same;
}

void MakePrivateMountTree(const std::string& dir) {
  // Bound even where the host has a mount there already: the tree must be one the daemon made,
  // which no namespace outside has a copy of.
  if (mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0) ThrowErrno("cannot bind " + dir + " onto itself");
  if (mount(nullptr, dir.c_str(), nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ThrowErrno("cannot make " + dir + " a private mount");
}

int PruneMountsInChild(const MountPruning& pruning, int* scratch) {
  if (unshare(CLONE_NEWNS) != 0) return errno;
  // What is mounted below goes nowhere else (the daemon's namespace is a slave already; this
  // holds whatever it is).
  if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0) return errno;
  const size_t kept = pruning.kept.size();
  size_t opened = 0;
  int err = 0;
  // Copies of the mounts that stay, detached from the tree (the sandbox's own overlays: the job
  // binds them), then the whole tree goes (every other sandbox's), then the copies come back.
  for (; opened < kept && err == 0; ++opened) {
    scratch[opened] = static_cast<int>(open_tree(AT_FDCWD, pruning.kept[opened].c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    if (scratch[opened] < 0) err = errno;
  }
  if (err == 0 && umount2(pruning.tree.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0) err = errno;
  for (size_t i = 0; i < kept && err == 0; ++i)
    if (move_mount(scratch[i], "", AT_FDCWD, pruning.kept[i].c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0) err = errno;
  for (size_t i = 0; i < opened; ++i)
    if (scratch[i] >= 0) close(scratch[i]);
  return err;
}

}  // namespace sandboxd
