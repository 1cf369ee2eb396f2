#include "polkit_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace sandboxctl {
namespace {

constexpr const char* kAgentPath = "/usr/bin/pkttyagent";

}  // namespace

PolkitAgent::PolkitAgent() {
  if (!isatty(STDIN_FILENO) || geteuid() == 0 || access(kAgentPath, X_OK) != 0) return;
  int notify[2];
  if (pipe2(notify, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    close(notify[0]);
    close(notify[1]);
    return;
  }
  if (pid == 0) {
    // The agent keeps the terminal; its notify fd must survive exec.
    int fd = dup(notify[1]);
    std::string fd_text = std::to_string(fd);
    execl(kAgentPath, kAgentPath, "--notify-fd", fd_text.c_str(), "--fallback", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(notify[1]);
  pid_ = pid;
  // pkttyagent closes the fd once registered (or exits): wait for that, at most 5 s.
  pollfd fd{notify[0], POLLHUP | POLLIN, 0};
  while (poll(&fd, 1, 5000) < 0 && errno == EINTR) {
  }
  close(notify[0]);
}

PolkitAgent::~PolkitAgent() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace sandboxctl
