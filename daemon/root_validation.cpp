#include "root_validation.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <memory>

#include "errors.h"
#include "process.h"

namespace sandboxd {
namespace {

struct CheckArgs {
  const char* path;
  const UserCredentials* user;
};

int CheckInChild(void* raw) {
  const auto& args = *static_cast<const CheckArgs*>(raw);
  int err = DropPrivilegesInChild(*args.user);
  if (err != 0) _exit(err);
  struct stat st;
  if (stat(args.path, &st) != 0) _exit(errno);
  if (!S_ISDIR(st.st_mode)) _exit(ENOTDIR);
  if (faccessat(AT_FDCWD, args.path, W_OK | X_OK, AT_EACCESS) != 0) _exit(errno);
  _exit(0);
}

/// Asks, with the user's own credentials, whether `path` is an existing directory the user can
/// write and enter. Done in a child that drops privilege, because the daemon's root
/// credentials would see and write everything; only raw syscalls happen in the child.
int CheckAsUser(const std::string& path, const UserCredentials& user) {
  CheckArgs args{path.c_str(), &user};
  pid_t pid = CloneSharingMemory(CheckInChild, &args);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) return EIO;
  return WEXITSTATUS(status);
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

std::string ValidateRoot(const std::string& path, const UserCredentials& user, const ForbiddenAreas& areas) {
  CheckRootSyntax(path);
  switch (int err = CheckAsUser(path, user)) {
    case 0: break;
    case ENOENT: throw Error(Code::kInvalidPath, "root " + path + " does not exist");
    case ENOTDIR: throw Error(Code::kInvalidPath, "root " + path + " is not a directory");
    case EACCES:
    case EPERM:
    case EROFS: throw Error(Code::kInvalidPath, "root " + path + " is not a directory you can write");
    default: ThrowErrno(err, "cannot check root " + path);
  }
  std::unique_ptr<char, decltype(&free)> resolved(realpath(path.c_str(), nullptr), &free);
  if (!resolved) ThrowErrno("cannot resolve root " + path);
  std::string canonical(resolved.get());
  if (auto reason = ForbiddenReason(canonical, areas))
    throw Error(Code::kInvalidPath, "root " + path + " cannot be sandboxed: " + *reason);
  return canonical;
}

void CheckRootsDisjoint(const std::vector<std::string>& roots) {
  for (size_t i = 0; i < roots.size(); ++i)
    for (size_t j = i + 1; j < roots.size(); ++j)
      if (PathsOverlap(roots[i], roots[j]))
        throw Error(Code::kOverlap, "roots " + roots[i] + " and " + roots[j] + " nest or coincide");
}

}  // namespace sandboxd
