// A stand-in for bwrap that keeps bwrap's side of what Job (daemon/as_root/jobs/job.h) relies on, and
// can break it on purpose, so that a job's start and monitoring are tested without privilege,
// a sandbox or a mount:
//   - it reads its options from fd 4 (--args) and ignores them;
//   - it starts the command as pid 1 of a new pid namespace (in a new user namespace, so any
//     user may), which waits for a byte on fd 5 (--block-fd) before it runs the command, and
//     dies with it (--die-with-parent);
//   - it reports {"child-pid": N} on fd 3 (--json-status-fd) and, once the command has ended,
//     {"exit-code": N}, and exits with the command's status.
// Usage: fake-bwrap [--no-report] [--forge-first] [--no-exit-code] -- COMMAND...
//   --no-report      never reports the child's pid (as a bwrap that hangs in its set-up)
//   --forge-first    first reports its own pid, a process in no new namespace (a forged line)
//   --no-exit-code   reports no exit code, and exits 1 (a sandbox that could not be set up)

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kStatusFd = 3, kArgsFd = 4, kBlockFd = 5;

void Report(const std::string& line) {
  std::string text = line + "\n";
  (void)!write(kStatusFd, text.data(), text.size());
}

struct Child {
  char** argv;
};

int RunCommand(void* arg) {
  auto* child = static_cast<Child*>(arg);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  char go = 0;
  if (read(kBlockFd, &go, 1) != 1) _exit(126);  // never told to go: the command must not run
  close(kStatusFd);
  close(kBlockFd);
  execvp(child->argv[0], child->argv);
  _exit(127);
}

}  // namespace

int main(int argc, char** argv) {
  bool report = true, forge_first = false, exit_code = true;
  int at = 1;
  for (; at < argc && std::strcmp(argv[at], "--") != 0; ++at) {
    if (std::strcmp(argv[at], "--no-report") == 0) report = false;
    else if (std::strcmp(argv[at], "--forge-first") == 0) forge_first = true;
    else if (std::strcmp(argv[at], "--no-exit-code") == 0) exit_code = false;
  }
  if (at + 1 >= argc) {
    std::fprintf(stderr, "fake-bwrap: no command after --\n");
    return 2;
  }
  char options[4096];
  while (read(kArgsFd, options, sizeof options) > 0) {
  }
  close(kArgsFd);
  static char stack[256 << 10];
  Child child{argv + at + 1};
  pid_t pid = clone(RunCommand, stack + sizeof stack, CLONE_NEWUSER | CLONE_NEWPID | SIGCHLD, &child);
  if (pid < 0) {
    std::perror("fake-bwrap: clone");
    return 1;
  }
  close(kBlockFd);
  if (forge_first) Report("{\"child-pid\": " + std::to_string(getpid()) + "}");
  if (report) Report("{\"child-pid\": " + std::to_string(pid) + "}");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!exit_code) return 1;
  Report("{\"exit-code\": " + std::to_string(code) + "}");
  return code;
}
