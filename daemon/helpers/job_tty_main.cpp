// sandboxd-job-tty: the first program of a job run on a terminal (Sandbox.Run option "tty").
// bwrap --new-session gives the job a session of its own, but led by bwrap's init (pid 1 of
// the job's pid namespace), not by the command; this starts a session led by the command, makes
// the terminal on its stdin that session's controlling terminal, so that a shell gets job
// control and window-size changes, then becomes the command. The terminal is a fresh pseudo-terminal
// of the client's, never the client's own: nothing typed into it reaches the caller's session.

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sandboxd-job-tty CMD [ARG...] (started by sandboxd only)\n");
    return 2;
  }
  if (setsid() < 0 || ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0) {
    std::fprintf(stderr, "sandboxd: cannot make the job's terminal its controlling terminal: %s\n", std::strerror(errno));
    return 126;
  }
  execvp(argv[1], argv + 1);
  std::fprintf(stderr, "sandboxd: cannot run %s: %s\n", argv[1], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
