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

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
