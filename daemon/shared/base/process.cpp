#include "base/process.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"

namespace sandboxd {
namespace {

int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

/// Drops to `user` in a freshly forked child: raw syscalls only (the parent is multithreaded,
/// so no allocation or locking after fork). Order as bubblewrap does it: groups first (needs
/// privilege), then gid, then uid; then no_new_privs so that nothing exec'ed can regain
/// privilege through setuid bits or file capabilities; then verify.
}  // namespace

int DropPrivilegesInChild(const UserCredentials& user) {
  // Not dumpable, whatever fs.suid_dumpable says: a child that shares the daemon's memory
  // (CloneSharingMemory) must never be ptrace-able by the user it now runs as. Dumpability
  // belongs to the memory, so the daemon's becomes so too (the change of credentials below
  // would set it to fs.suid_dumpable anyway); an exec gives the child memory of its own, which
  // the kernel makes dumpable for its now consistent credentials.
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return errno;
  // An unprivileged daemon (user mode) has nothing to drop: it may only be asked to be itself.
  if (geteuid() != 0) {
    if (user.uid != geteuid()) return EPERM;
  } else {
    if (syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0) return errno;
    if (syscall(SYS_setresgid, user.gid, user.gid, user.gid) != 0) return errno;
    if (syscall(SYS_setresuid, user.uid, user.uid, user.uid) != 0) return errno;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  uid_t r, e, s;
  if (getresuid(&r, &e, &s) != 0 || r != user.uid || e != user.uid || s != user.uid) return EPERM;
  return 0;
}

namespace {

[[noreturn]] void ChildFail(int report_fd, int err) {
  ssize_t ignored = write(report_fd, &err, sizeof err);
  (void)ignored;
  _exit(127);
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
    waited_ = std::exchange(other.waited_, false);
  }
  return *this;
}

ChildProcess::~ChildProcess() { KillAndReap(); }

void ChildProcess::KillAndReap() {
  if (pid_ > 0 && !waited_) {
    Kill(SIGKILL);
    Wait();
  }
}

void ChildProcess::Kill(int signal) const {
  if (pid_ <= 0 || waited_) return;
  if (pidfd_.valid()) {
    syscall(SYS_pidfd_send_signal, pidfd_.get(), signal, nullptr, 0);
  } else {
    ::kill(pid_, signal);
  }
}

int ChildProcess::Wait() {
  if (pid_ <= 0) return 0;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  waited_ = true;
  return status;
}

namespace {

/// What the spawned child reads from its parent's memory (shared until exec).
struct SpawnChildArgs {
  const SpawnOptions* options;
  char* const* argv;
  char* const* envp;
  int max_child_fd;
  int report_fd;
  pid_t parent;
  int* pruning_scratch;  ///< PruneMountsInChild's
};

/// Everything SpawnChild reads, built before the child starts (the child makes only raw
/// syscalls): for Spawn's child, and for a parked one's program (ExecSpawned).
class SpawnChildMemory {
 public:
  explicit SpawnChildMemory(const SpawnOptions& options)
      : options_(options),
        argv_storage_(options.argv),
        env_storage_(options.env),
        argv_(CStrings(argv_storage_)),
        envp_(CStrings(env_storage_)),
        pruning_scratch_(options.pruned_mounts ? options.pruned_mounts->kept.size() : 0) {
    for (const auto& [child_fd, parent_fd] : options.fds) max_child_fd_ = std::max(max_child_fd_, child_fd);
  }
  SpawnChildArgs Args(int report_fd, pid_t parent) {
    return {&options_, argv_.data(), envp_.data(), max_child_fd_, report_fd, parent, pruning_scratch_.data()};
  }

 private:
  const SpawnOptions& options_;
  std::vector<std::string> argv_storage_, env_storage_;
  std::vector<char*> argv_, envp_;
  std::vector<int> pruning_scratch_;
  int max_child_fd_ = 2;
};

/// Closes every fd above `floor` but the `count` in `keep` (each above `floor`), with
/// close_range between them: no allocation, fit for a child sharing the daemon's memory.
void CloseAllAboveBut(int floor, int* keep, size_t count) {
  for (size_t i = 1; i < count; ++i)  // insertion sort: a handful of fds
    for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
  unsigned int low = static_cast<unsigned int>(floor) + 1;
  for (size_t i = 0; i < count; ++i) {
    const auto kept = static_cast<unsigned int>(keep[i]);
    if (kept > low) syscall(SYS_close_range, low, kept - 1, 0);
    low = kept + 1;
  }
  syscall(SYS_close_range, low, ~0U, 0);
}

/// Most cgroups a child enters: one cgroup2 group and a group per cgroup v1 limit controller.
constexpr size_t kMostCgroups = 16;

int SpawnChild(void* raw) {
  const auto& args = *static_cast<const SpawnChildArgs*>(raw);
  const SpawnOptions& options = *args.options;
  // Move the report fd and every source fd above all target fds first, so that the dup2s
  // below cannot clobber a source that is still needed.
  int high = args.max_child_fd + 1;
  int rfd = fcntl(args.report_fd, F_DUPFD_CLOEXEC, high);
  if (rfd < 0) _exit(127);
  int kept[kMostCgroups + 1] = {rfd};
  const size_t cgroups = options.cgroup_procs_fds.size();
  if (cgroups > kMostCgroups) ChildFail(rfd, E2BIG);
  for (size_t i = 0; i < cgroups; ++i) {
    kept[i + 1] = fcntl(options.cgroup_procs_fds.data()[i], F_DUPFD_CLOEXEC, high);
    if (kept[i + 1] < 0) ChildFail(rfd, errno);
  }
  int moved[64];
  size_t n = options.fds.size() < 64 ? options.fds.size() : 64;
  for (size_t i = 0; i < n; ++i) {
    moved[i] = fcntl(options.fds[i].second, F_DUPFD_CLOEXEC, high);
    if (moved[i] < 0) ChildFail(rfd, errno);
  }
  for (size_t i = 0; i < n; ++i) {
    if (dup2(moved[i], options.fds[i].first) < 0) ChildFail(rfd, errno);
  }
  // Close every fd the child was not given (the daemon holds the bus, the database, other
  // users' directories, other jobs' pipes), now rather than at exec: entering a cgroup below
  // waits for an RCU grace period (9-17 ms here), and a copy of another job's output pipe
  // held that long delays that job's end by as much.
  for (int fd = 0; fd <= args.max_child_fd; ++fd) {
    bool mapped = false;
    for (size_t i = 0; i < n; ++i) mapped |= options.fds[i].first == fd;
    if (!mapped) close(fd);
  }
  CloseAllAboveBut(args.max_child_fd, kept, cgroups + 1);
  for (size_t i = 0; i < cgroups + 1; ++i) {
    if (kept[i] == rfd) continue;
    if (write(kept[i], "0", 1) != 1) ChildFail(rfd, errno);
    close(kept[i]);
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &default_action, nullptr);  // the daemon ignores it; exec would keep that
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // As root still: mounts need CAP_SYS_ADMIN, which the drop below gives up.
  if (options.pruned_mounts) {
    int err = PruneMountsInChild(*options.pruned_mounts, args.pruning_scratch);
    if (err != 0) ChildFail(rfd, err);
  }
  if (options.user) {
    int err = DropPrivilegesInChild(*options.user);
    if (err != 0) ChildFail(rfd, err);
  }
  // After the change of credentials, which clears the parent-death signal; then make sure
  // the parent did not die before it was set.
  if (options.die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != args.parent)) _exit(127);
  ::umask(options.umask);
  if (chdir(options.cwd.c_str()) != 0) ChildFail(rfd, errno);
  execve(options.path.c_str(), args.argv, args.envp);
  ChildFail(rfd, errno);
}

/// The child of CloneSharingMemory starts here: no handler of the daemon may run in it, on
/// memory it shares with the daemon, so every caught signal goes back to its default before
/// the mask (inherited: all blocked) can be lifted by the body.
struct SharedChildStart {
  int (*body)(void*);
  void* arg;
};

int SharedChildEntry(void* raw) {
  const auto& start = *static_cast<const SharedChildStart*>(raw);
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN) continue;
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(sig, &default_action, nullptr);
  }
  return start.body(start.arg);
}

}  // namespace

pid_t CloneSharingMemory(int (*body)(void*), void* arg, int extra_flags) {
  constexpr size_t kStackSize = 256 * 1024;
  void* stack = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) ThrowErrno("cannot map a stack for a child process");
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  SharedChildStart start{body, arg};
  // CLONE_VFORK: this thread sleeps until the child has exec'ed or exited, so the stack and
  // everything `arg` points to stay valid for as long as the child uses them.
  pid_t pid = clone(SharedChildEntry, static_cast<char*>(stack) + kStackSize, CLONE_VM | CLONE_VFORK | SIGCHLD | extra_flags, &start);
  int clone_errno = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
#if defined(__SANITIZE_ADDRESS__)
  // The child ran instrumented code on this stack and exec'ed or exited without unwinding: its
  // frames' redzones stay marked in the shadow memory, and a later mapping at the same address
  // (SQLite's WAL index) inherited them as a false "stack-buffer-underflow" (seen once in a
  // sanitized unit run, in SQLite's memset).
  __asan_unpoison_memory_region(stack, kStackSize);
#endif
  munmap(stack, kStackSize);
  if (pid < 0) ThrowErrno(clone_errno, "cannot start a child process");
  return pid;
}

ChildProcess Spawn(const SpawnOptions& options) {
  SpawnChildMemory memory(options);
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) ThrowErrno("cannot create pipe");
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);

  SpawnChildArgs args = memory.Args(report_write.get(), getpid());
  pid_t pid = CloneSharingMemory(SpawnChild, &args);

  report_write.reset();
  ChildProcess child(pid, UniqueFd(PidfdOpen(pid)));
  int child_errno = 0;
  ssize_t got;
  while ((got = read(report_read.get(), &child_errno, sizeof child_errno)) < 0 && errno == EINTR) {
  }
  if (got == sizeof child_errno) {
    child.Wait();
    ThrowErrno(child_errno, "cannot start " + options.path);
  }
  return child;
}

void ExecSpawned(const SpawnOptions& options, int report_fd, pid_t parent) {
  SpawnChildMemory memory(options);
  SpawnChildArgs args = memory.Args(report_fd, parent);
  SpawnChild(&args);
  _exit(127);
}

RunResult RunAndCapture(SpawnOptions options, const std::string& input) {
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    ThrowErrno("cannot create pipe");
  UniqueFd in_r(in[0]), in_w(in[1]), out_r(out[0]), out_w(out[1]), err_r(err[0]), err_w(err[1]);
  options.fds.push_back({0, in_r.get()});
  options.fds.push_back({1, out_w.get()});
  options.fds.push_back({2, err_w.get()});
  ChildProcess child = Spawn(options);
  in_r.reset();
  out_w.reset();
  err_w.reset();
  fcntl(in_w.get(), F_SETFL, O_NONBLOCK);

  RunResult result;
  size_t written = 0;
  if (input.empty()) in_w.reset();
  char buf[65536];
  while (out_r.valid() || err_r.valid()) {
    pollfd fds[3];
    int n = 0;
    int in_idx = -1, out_idx = -1, err_idx = -1;
    if (in_w.valid()) { in_idx = n; fds[n++] = {in_w.get(), POLLOUT, 0}; }
    if (out_r.valid()) { out_idx = n; fds[n++] = {out_r.get(), POLLIN, 0}; }
    if (err_r.valid()) { err_idx = n; fds[n++] = {err_r.get(), POLLIN, 0}; }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      ThrowErrno("poll");
    }
    if (in_idx >= 0 && fds[in_idx].revents) {
      ssize_t w = write(in_w.get(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) in_w.reset();
      if (written == input.size()) in_w.reset();
    }
    auto drain = [&](int idx, UniqueFd& fd, std::string& sink) {
      if (idx < 0 || !fds[idx].revents) return;
      ssize_t r = read(fd.get(), buf, sizeof buf);
      if (r > 0) sink.append(buf, static_cast<size_t>(r));
      else if (r == 0 || (errno != EINTR && errno != EAGAIN)) fd.reset();
    };
    drain(out_idx, out_r, result.out);
    drain(err_idx, err_r, result.err);
  }
  in_w.reset();
  result.status = child.Wait();
  return result;
}

int ExitStatusFromWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace sandboxd
