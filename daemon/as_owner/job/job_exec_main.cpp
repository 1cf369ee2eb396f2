// sandboxd-job-exec: the first program of every job, run by bwrap inside the sandbox. It becomes
// the job's command, and where that cannot be done it says so in one plain line and exits as a
// shell would: 127 for a command that does not exist, 126 for one that cannot be executed
// (bwrap's own failure would read as the sandbox failing to be set up).
//
// With --tty (Sandbox.Run option "tty"): bwrap --new-session gives the job a session of its own,
// but led by bwrap's init (pid 1 of the job's pid namespace), not by the command; this starts a
// session led by the command and makes the terminal on its stdin that session's controlling
// terminal, so that a shell gets job control and window-size changes. The terminal is a fresh
// pseudo-terminal of the client's, never the client's own: nothing typed into it reaches the
// caller's session.

//
// Before it becomes the command it closes the abstract unix sockets of everyone outside the job
// to it (Landlock's scope, ABI 6): with the network a job shares the host's network namespace,
// where X11's and session buses' abstract sockets live. The job's own processes, all beneath
// this one, still reach each other's.

#include <linux/landlock.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

/// Landlock's ruleset attributes as of ABI 6 (Linux 6.12), which Debian 12's headers predate.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};
constexpr uint64_t kScopeAbstractUnixSocket = 1;  // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
constexpr long kScopesAbi = 6;

/// Closes the abstract sockets made outside this process's descendants; false (errno set) when
/// the kernel offers the scope and it could not be had. A kernel without it (sandboxd says so
/// at start-up) leaves them open.
bool ScopeAbstractSockets() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < kScopesAbi) return true;
  RulesetAttr attr;
  attr.scoped = kScopeAbstractUnixSocket;
  int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return false;
  // (bwrap set no_new_privs already; restrict_self requires it.)
  bool scoped = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  int error = errno;
  close(ruleset);
  errno = error;
  return scoped;
}

}  // namespace

int main(int argc, char** argv) {
  int first = 1;
  bool tty = first < argc && std::strcmp(argv[first], "--tty") == 0;
  if (tty) ++first;
  if (first < argc && std::strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    std::fprintf(stderr, "usage: sandboxd-job-exec [--tty] -- CMD [ARG...] (started by sandboxd only)\n");
    return 2;
  }
  if (tty && (setsid() < 0 || ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0)) {
    std::fprintf(stderr, "sandboxd: cannot make the job's terminal its controlling terminal: %s\n", std::strerror(errno));
    return 126;
  }
  if (!ScopeAbstractSockets()) {
    std::fprintf(stderr, "sandboxd: cannot close the host's abstract unix sockets to the job (Landlock): %s\n", std::strerror(errno));
    return 126;
  }
  const char* command = argv[first];
  execvp(command, argv + first);
  int error = errno;
  // As sh says it: a name looked up in PATH and not found is "not found"; a path given that
  // does not exist, or anything that exists and cannot be run, names why.
  if (error == ENOENT && std::strchr(command, '/') == nullptr) {
    std::fprintf(stderr, "sandboxd: %s: command not found\n", command);
    return 127;
  }
  std::fprintf(stderr, "sandboxd: cannot run %s: %s\n", command, std::strerror(error));
  return error == ENOENT ? 127 : 126;
}
