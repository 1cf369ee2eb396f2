// sandboxd-user-overlay: the first program of a job in user mode (sandboxd --user), where no
// daemon may mount on the host. It enters a user namespace of its own (its uid and gid mapped to
// themselves, so that files keep their owner) with a mount namespace, mounts each root's overlay
// over the root's own path there (marks in user.overlay.*, the kernel's rule for overlays
// mounted in a user namespace), and becomes the rest of its command line: bwrap, which then
// builds the job's namespaces inside these as it does in system mode.
//
//   sandboxd-user-overlay (--overlay ROOT UPPER WORK)... -- PROGRAM [ARG...]
//
// The capabilities this namespace grants end at exec: bwrap starts without any, as it must.

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/fs_util.h"
#include "base/overlay.h"

namespace {

struct Layer {
  std::string root, upper, work;
};

void WriteProcFile(const char* path, const std::string& text) {
  sandboxd::UniqueFd fd(open(path, O_WRONLY | O_CLOEXEC));
  if (!fd || write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    sandboxd::ThrowErrno(std::string("cannot write ") + path);
}

void EnterNamespaces() {
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) sandboxd::ThrowErrno("cannot make a user and mount namespace for the job");
  WriteProcFile("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n");
  WriteProcFile("/proc/self/setgroups", "deny");  // the kernel's condition for mapping a gid unprivileged
  WriteProcFile("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n");
  // Nothing mounted here may reach the host.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) sandboxd::ThrowErrno("cannot make the job's mounts private");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Layer> layers;
  int i = 1;
  for (; i + 3 < argc && std::strcmp(argv[i], "--overlay") == 0; i += 4) layers.push_back({argv[i + 1], argv[i + 2], argv[i + 3]});
  if (layers.empty() || i + 1 >= argc || std::strcmp(argv[i], "--") != 0) {
    std::fprintf(stderr, "usage: sandboxd-user-overlay (--overlay ROOT UPPER WORK)... -- PROGRAM [ARG...] (started by sandboxd --user only)\n");
    return 2;
  }
  try {
    EnterNamespaces();
    for (const auto& layer : layers) {
      sandboxd::UniqueFd lower = sandboxd::OpenDirectoryNoSymlinks(layer.root, O_PATH);
      sandboxd::MountOverlay({lower.get(), layer.upper, layer.work, layer.root, /*user_xattr=*/true});
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sandboxd: %s\n", e.what());
    return 126;
  }
  execv(argv[i + 1], argv + i + 1);
  std::fprintf(stderr, "sandboxd: cannot run %s: %s\n", argv[i + 1], std::strerror(errno));
  return 126;
}
