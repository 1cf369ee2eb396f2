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
  const pid_t ours = getpid();  // before the fork: the agent is for this process, not its child
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
    // Registered for our own process, not for a login session: polkit finds it for our calls
    // (it looks up the agent of the caller's process first), and there may be no session at all
    // (no logind, a container, ssh without pam_systemd), where a session agent cannot register.
    // Not --fallback: polkit passes a fallback agent over for a process's requests (seen with
    // polkit 122), and ours replaces no one's: the scope is our process alone.
    std::string process = std::to_string(ours);
    execl(kAgentPath, kAgentPath, "--process", process.c_str(), "--notify-fd", fd_text.c_str(), static_cast<char*>(nullptr));
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
