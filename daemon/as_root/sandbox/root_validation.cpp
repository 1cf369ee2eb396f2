#include "sandbox/root_validation.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <utility>

#include "base/errors.h"
#include "base/fs_util.h"
#include "base/private_mounts.h"
#include "base/process.h"

namespace sandboxd {
namespace {

/// What the child of OpenAsUser shares with the daemon (CLONE_VM|CLONE_FILES): it reads the
/// request and writes back the descriptor it opened and, if it was refused, why.
struct OpenArgs {
  const char* path;
  const UserCredentials* user;
  int fd;   ///< -1 until opened; a descriptor of the daemon's own table then
  int err;  ///< 0, or the errno that refused the root
};

int OpenInChild(void* raw) {
  auto& args = *static_cast<OpenArgs*>(raw);
  int err = DropPrivilegesInChild(*args.user);
  if (err != 0) {
    args.err = err;
    _exit(0);
  }
  // Resolved with the caller's credentials only: every directory on the way must be one the
  // caller may search, and a symlink leads where the caller's own lookup would. O_PATH: no
  // read permission is needed, and nothing of the directory is used yet.
  int fd = open(args.path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    args.err = errno;
    _exit(0);
  }
  args.fd = fd;
  // Asked of the descriptor ("." beneath it), not of the name, which may mean another
  // directory by now.
  if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) args.err = errno;
  _exit(0);
}

/// Opens `path` in a child that has dropped to `user` (the daemon's root credentials would
/// reach and write everything) and shares the daemon's fd table, so the descriptor it opened
/// is ours once it is gone. Only raw syscalls happen in the child. Returns the descriptor (when
/// it was opened) and 0 or the errno that refuses the root.
/// Why sharing the fd table (and memory) with a process of the user's uid is safe: nothing of
/// the user's runs in it (it execs nothing), and its change of credentials made it
/// non-dumpable (fs.suid_dumpable 0 or 2), so the user can neither ptrace it nor open
/// /proc/PID/fd in its short life.
std::pair<UniqueFd, int> OpenAsUser(const std::string& path, const UserCredentials& user) {
  OpenArgs args{path.c_str(), &user, -1, 0};
  pid_t pid = CloneSharingMemory(OpenInChild, &args, CLONE_FILES);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  UniqueFd fd(args.fd);  // ours, whatever became of the child after it opened it
  int err = args.err;
  if (err == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fd)) err = EIO;
  return {std::move(fd), err};
}

std::string ReadFdLink(int fd) {
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  char target[PATH_MAX];
  ssize_t n = readlink(link.c_str(), target, sizeof target);
  if (n < 0) ThrowErrno("cannot read " + link);
  if (static_cast<size_t>(n) >= sizeof target) return "";  // too long to be a root
  return std::string(target, static_cast<size_t>(n));
}

}  // namespace

bool PathHolds(const std::string& outer, const std::string& inner) {
  if (outer == "/" || inner == outer) return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/';
}

bool PathsOverlap(const std::string& a, const std::string& b) { return PathHolds(a, b) || PathHolds(b, a); }

std::optional<std::string> ForbiddenReason(const std::string& canonical, const ForbiddenAreas& areas) {
  if (canonical == "/") return "it is the whole file system";
  static constexpr std::array<const char*, 4> kSystemTrees = {"/proc", "/sys", "/dev", "/run"};
  for (const char* tree : kSystemTrees) {
    std::string t(tree);
    if (canonical == t || canonical.compare(0, t.size() + 1, t + "/") == 0)
      return "it is in the system directory " + t;
  }
  // A root around or inside sandboxd's own state would let a sandbox see or commit into other
  // sandboxes' layers.
  if (!areas.state_dir.empty() && PathsOverlap(canonical, areas.state_dir))
    return "it overlaps sandboxd's state directory " + areas.state_dir;
  if (!areas.run_dir.empty() && PathsOverlap(canonical, areas.run_dir))
    return "it overlaps sandboxd's runtime directory " + areas.run_dir;
  return std::nullopt;
}

void CheckRootSyntax(const std::string& path) {
  if (path.empty()) throw Error(Code::kInvalidPath, "an empty path cannot be a sandbox root");
  if (path.find('\0') != std::string::npos) throw Error(Code::kInvalidPath, "a root path must not contain NUL bytes");
  if (path.size() >= PATH_MAX) throw Error(Code::kInvalidPath, "root path is longer than PATH_MAX");
  if (path[0] != '/') throw Error(Code::kInvalidPath, "root '" + path + "' is not an absolute path");
}

std::optional<std::string> PathFromFdLink(const std::string& link_target, bool deleted) {
  if (deleted || link_target.empty() || link_target[0] != '/') return std::nullopt;
  return link_target;
}

OpenedRoot OpenRoot(const std::string& path, const UserCredentials& user, const ForbiddenAreas& areas) {
  CheckRootSyntax(path);
  auto [fd, err] = OpenAsUser(path, user);
  switch (err) {
    case 0: break;
    case ENOENT: throw Error(Code::kInvalidPath, "root " + path + " does not exist");
    case ENOTDIR: throw Error(Code::kInvalidPath, "root " + path + " is not a directory");
    case EACCES:
    case EPERM:
    case EROFS: throw Error(Code::kInvalidPath, "root " + path + " is not a directory you can write");
    case ELOOP: throw Error(Code::kInvalidPath, "root " + path + " leads through too many symlinks");
    default: ThrowErrno(err, "cannot check root " + path);
  }
  OpenedRoot root;
  root.fd = std::move(fd);
  struct stat st;
  if (fstat(root.fd.get(), &st) != 0) ThrowErrno("cannot stat root " + path);
  root.dev = st.st_dev;
  root.ino = st.st_ino;
  // The canonical path is the one the kernel keeps for the directory opened: no second lookup
  // of `path` (as root, it could lead elsewhere by now).
  auto canonical = PathFromFdLink(ReadFdLink(root.fd.get()), st.st_nlink == 0);
  if (!canonical) throw Error(Code::kInvalidPath, "root " + path + " was removed or moved out of reach while it was opened");
  root.canonical = *canonical;
  // Forbidden areas are judged on what was opened, not on what the caller wrote.
  if (auto reason = ForbiddenReason(root.canonical, areas))
    throw Error(Code::kInvalidPath, "root " + path + " cannot be sandboxed: " + *reason);
  // The canonical path is recorded, compared with other sandboxes' roots and bound in every
  // job: it must name this very directory, without a symlink on the way, now that it was
  // checked. (Only a confirmation: the mount is made from the descriptor.)
  try {
    UniqueFd again = OpenDirectoryNoSymlinks(root.canonical, O_PATH);
    struct stat again_st;
    if (fstat(again.get(), &again_st) != 0 || again_st.st_dev != root.dev || again_st.st_ino != root.ino)
      throw Error(Code::kInvalidPath, "");
  } catch (const Error&) {
    throw Error(Code::kInvalidPath, "root " + path + " was moved or replaced while it was checked; try again");
  }
  // sandboxd mounts in a namespace of its own (base/private_mounts.h), which does not see a
  // file system the host mounted since sandboxd started where the host's mounts do not
  // propagate: the path would name the directory beneath it. Refused, not sandboxed instead.
  if (!HostSeesTheSame(root.canonical, root.dev, root.ino))
    throw Error(Code::kInvalidPath, "root " + path +
                                        " is not what sandboxd sees there: it is on a file system mounted after sandboxd started, on a "
                                        "host whose mounts do not propagate (/ is not a shared mount); restart sandboxd to use it");
  return root;
}

std::string DescribeOverlap(const std::string& mine, bool mine_shared, const OverlapParty& other) {
  if (!other.callers) {
    // Neither its id, its root (which may say whose it is: /home/bob/...) nor its owner: a
    // refusal must not become a way to map other users' work.
    std::string text = "root " + mine + " overlaps a sandbox of another user";
    if (other.shared && !mine_shared) text += " (it is shared: create yours --shared to overlap it)";
    return text;
  }
  return "root " + mine + " overlaps root " + other.root + " of sandbox " + other.id +
         (mine_shared ? " (which is not shared)" : " (both must be created --shared to overlap)");
}

void CheckRootsDisjoint(const std::vector<std::string>& roots) {
  for (size_t i = 0; i < roots.size(); ++i)
    for (size_t j = i + 1; j < roots.size(); ++j)
      if (PathsOverlap(roots[i], roots[j]))
        throw Error(Code::kOverlap, "roots " + roots[i] + " and " + roots[j] + " nest or coincide");
}

}  // namespace sandboxd
