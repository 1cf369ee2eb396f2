#include "user_process.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace sandboxd::it {

std::optional<UserIds> LookUpUser(const std::string& name, std::string& why) {
  passwd entry;
  passwd* found = nullptr;
  char text[4096];
  if (getpwnam_r(name.c_str(), &entry, text, sizeof text, &found) != 0 || found == nullptr) {
    why = "no user " + name;
    return std::nullopt;
  }
  UserIds user{.name = name, .home = found->pw_dir, .uid = found->pw_uid, .gid = found->pw_gid, .groups = {}};
  int count = 64;
  user.groups.resize(static_cast<size_t>(count));
  if (getgrouplist(name.c_str(), user.gid, user.groups.data(), &count) < 0) {
    user.groups.resize(static_cast<size_t>(count));
    getgrouplist(name.c_str(), user.gid, user.groups.data(), &count);
  }
  user.groups.resize(static_cast<size_t>(count));
  return user;
}

namespace {

std::string ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  for (const char* dir : {"/usr/bin", "/bin", "/usr/sbin", "/sbin"}) {
    std::string path = std::string(dir) + "/" + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return name;
}

// Only raw system calls between fork and exec: the test process may have threads (libatspi's,
// glib's), and another thread may have held malloc's lock at the fork.
[[noreturn]] void BecomeUserAndExec(const UserIds& user, const char* path, char* const* argv, char* const* envp, int log, int null,
                                    int fd3, pid_t parent) {
  if (fd3 == 3) {
    // dup2 onto itself would keep close-on-exec set.
    if (fcntl(3, F_SETFD, 0) != 0) _exit(124);
  } else if (fd3 >= 0 && dup2(fd3, 3) < 0) {
    _exit(124);
  }
  if (dup2(null, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0) _exit(124);
  // Nothing else of the test's (its bus connections, other children's pipes) leaks into a
  // daemon that outlives the call: a kept pipe end would hide another child's end of file.
  close_range(fd3 >= 0 ? 4 : 3, ~0U, 0);
  // A session of its own: a process group to stop it with, and no controlling terminal.
  if (setsid() < 0) _exit(124);
  // Groups before gid before uid: each later step takes away the right to do the earlier ones.
  if (setgroups(user.groups.size(), user.groups.data()) != 0 || setresgid(user.gid, user.gid, user.gid) != 0 ||
      setresuid(user.uid, user.uid, user.uid) != 0)
    _exit(125);
  uid_t ruid, euid, suid;
  if (getresuid(&ruid, &euid, &suid) != 0 || ruid != user.uid || euid != user.uid || suid != user.uid) _exit(125);
  // A test killed before its destructors ran (a timeout's SIGKILL) takes its session with it,
  // rather than leaving an Xvfb on a display number. After setresuid, which would clear it;
  // then checked, in case the parent died before it was set.
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(124);
  if (chdir(user.home.c_str()) != 0 && chdir("/") != 0) _exit(126);
  execve(path, argv, envp);
  static constexpr char kExecFailed[] = "SpawnAs: exec failed\n";
  [[maybe_unused]] ssize_t ignored = write(2, kExecFailed, sizeof kExecFailed - 1);
  _exit(127);
}

}  // namespace

pid_t SpawnAs(const UserIds& user, const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& log, int fd3, std::string& why) {
  if (argv.empty()) {
    why = "SpawnAs: no program";
    return -1;
  }
  const std::string path = ResolveProgram(argv.front());
  std::vector<std::string> args_copy = argv, env_copy = env;
  std::vector<char*> args, envp;
  for (auto& arg : args_copy) args.push_back(arg.data());
  args.push_back(nullptr);
  for (auto& entry : env_copy) envp.push_back(entry.data());
  envp.push_back(nullptr);
  // Opened by root here, so the user's processes may append to their log but not replace it.
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) {
    why = "cannot open " + log + " or /dev/null: " + std::strerror(errno);
    if (log_fd >= 0) close(log_fd);
    if (null_fd >= 0) close(null_fd);
    return -1;
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) BecomeUserAndExec(user, path.c_str(), args.data(), envp.data(), log_fd, null_fd, fd3, parent);
  int fork_errno = errno;
  close(log_fd);
  close(null_fd);
  if (pid < 0) why = std::string("fork: ") + std::strerror(fork_errno);
  return pid;
}

bool HasExited(pid_t pid, int* status) {
  siginfo_t info{};
  // WNOWAIT: a zombie keeps its pid, so a later kill(-pid) cannot reach a stranger.
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
  if (info.si_pid == 0) return false;
  if (status != nullptr) *status = info.si_code == CLD_EXITED ? W_EXITCODE(info.si_status, 0) : info.si_status;
  return true;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

void StopGroup(pid_t pid, std::chrono::milliseconds grace) {
  if (pid <= 0) return;
  kill(-pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!HasExited(pid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Also what the leader left behind in its group (the launcher's bus, a stuck helper).
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

std::optional<std::string> ReadLine(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string text;
  for (;;) {
    if (size_t newline = text.find('\n'); newline != std::string::npos) return text.substr(0, newline);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd ready{fd, POLLIN, 0};
    int polled = poll(&ready, 1, static_cast<int>(left));
    if (polled < 0 && errno != EINTR) return std::nullopt;
    if (polled <= 0) continue;
    char buffer[256];
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got == 0) return std::nullopt;
    if (got < 0 && errno != EINTR && errno != EAGAIN) return std::nullopt;
    if (got > 0) text.append(buffer, static_cast<size_t>(got));
  }
}

}  // namespace sandboxd::it
