#pragma once
/// Spawning children from the multithreaded daemon: argv, env and fd layout are prepared before
/// the child starts, the child makes only raw syscalls (it may drop to a user's credentials and set
/// no_new_privs) and execs. ChildProcess owns the child through a pidfd and kills and reaps it
/// on destruction unless it was waited for, so no child outlives its owner unnoticed.

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"
#include "base/private_mounts.h"

namespace sandboxd {

struct SpawnOptions {
  std::string path;                        ///< absolute path of the program
  std::vector<std::string> argv;
  std::vector<std::string> env;            ///< "K=V" entries; the child gets exactly these
  std::vector<std::pair<int, int>> fds;    ///< {child fd, parent fd}; every other fd is closed
  std::optional<UserCredentials> user;     ///< drop to this user before exec
  std::string cwd = "/";
  /// The child's umask: the daemon's own (077) must not leak into what users run.
  mode_t umask = 022;
  /// SIGKILL the child when the thread that spawned it ends (the daemon dying included): a
  /// helper moving files must never outlive the daemon that journals what it does.
  bool die_with_parent = false;
  /// cgroup.procs of cgroups (one per hierarchy), opened for writing: the child moves itself
  /// into each before it does anything else, so that everything it ever starts is in them
  /// (job_cgroup.h, job_limits.h).
  std::vector<int> cgroup_procs_fds;
  /// A mount namespace of the child's own, pruned so (private_mounts.h), made before the drop
  /// to `user`: for a child that makes namespaces of its own (bwrap), which would copy every
  /// sandbox's overlay from the daemon's.
  std::optional<MountPruning> pruned_mounts;
};

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}
  /// The moved-from one owns nothing (a copied pid would have it kill the child when it goes).
  ChildProcess(ChildProcess&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)), pidfd_(std::move(other.pidfd_)), waited_(std::exchange(other.waited_, false)) {}
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  bool running() const { return pid_ > 0 && !waited_; }
  /// Sends `signal` through the pidfd (no pid-reuse race). Harmless once the child has exited.
  void Kill(int signal) const;
  /// Blocks until the child exits; returns its wait status (as waitpid's).
  int Wait();

 private:
  void KillAndReap();
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  bool waited_ = false;
};

/// Starts `body(arg)` in a child process that shares this process's memory until it execs or
/// exits (clone with CLONE_VM|CLONE_VFORK, as posix_spawn does): copying a large daemon's page
/// tables for a fork costs milliseconds. The calling thread waits until the child has exec'ed
/// or exited; the body must make only raw syscalls and end in execve or _exit. Signals stay
/// blocked in the child, with every caught one reset to its default. Returns the child's pid.
/// `extra_flags` may add CLONE_FILES: the child then shares the fd table too, so that a
/// descriptor it opens with a user's credentials is the daemon's once it exits (its number
/// written to memory that `arg` points to), with no socket in between.
pid_t CloneSharingMemory(int (*body)(void*), void* arg, int extra_flags = 0);

/// Starts a program (see CloneSharingMemory) and waits until it has exec'ed. Throws Error(kFailed) when the program could not be started (exec errno is
/// reported back through a close-on-exec pipe).
ChildProcess Spawn(const SpawnOptions& options);

/// The child's half of Spawn, for a process of its own that was started before its program was
/// known (parked_spawn.h): arranges `options.fds`, its mount namespace and credentials as
/// Spawn's child does (options.cgroup_procs_fds included), and execs. On failure it writes the
/// errno value to `report_fd` (close-on-exec, so that an exec shows as its end) and exits 127.
/// `parent`: the process that must still be the parent for die_with_parent to hold.
[[noreturn]] void ExecSpawned(const SpawnOptions& options, int report_fd, pid_t parent);

/// Runs a program to completion with stdin from `input`, returning {wait status, stdout, stderr}.
struct RunResult {
  int status = 0;
  std::string out;
  std::string err;
};
RunResult RunAndCapture(SpawnOptions options, const std::string& input);

/// In a child process only: drops to `user` (groups, gid, uid, no_new_privs) with raw syscalls.
/// Returns 0 or an errno value.
int DropPrivilegesInChild(const UserCredentials& user);

/// Exit status as a shell reports it: the code, or 128+N for signal N.
int ExitStatusFromWaitStatus(int status);

}  // namespace sandboxd
