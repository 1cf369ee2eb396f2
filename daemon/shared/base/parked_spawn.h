#pragma once
/// A child started before its program is known, parked until it is told what to become.
///
/// Why: moving a process into a cgroup (writing cgroup.procs) takes the kernel's global
/// cgroup_threadgroup_rwsem for writing, which first waits for an RCU grace period: 9-17 ms on
/// this two-core machine, the largest part of a job's start. A parked child enters the next
/// job's cgroups ahead of time, off anyone's clock, and is then given the job's program.
///
/// The parked program (sandboxd-job-starter, job_starter_main.cpp: RunParked) runs as root with
/// an empty environment and nothing open but its end of a socket pair (fd 3) that only the
/// daemon holds; it waits there for one message: the program, its arguments and environment,
/// credentials, working directory, mounts to prune, and the fds it is to have (passed with
/// SCM_RIGHTS). It then does what Spawn's child does (ExecSpawned) and execs. A parked child
/// that is never used is killed with its ParkedSpawn; one whose daemon dies dies too (its
/// parent-death signal).

#include <string>
#include <vector>

#include "unique_fd.h"
#include "base/process.h"

namespace sandboxd {

class ParkedSpawn {
 public:
  /// Starts `program` (a parked program: RunParked) on the calling thread, which must outlive
  /// every program the child becomes: their parent-death signals are that thread's (bwrap
  /// --die-with-parent). It enters each cgroup of `cgroup_procs_fds` before its exec, and waits.
  /// Throws Error naming the program when it cannot be started.
  static ParkedSpawn Start(const std::string& program, const std::vector<int>& cgroup_procs_fds);

  ParkedSpawn() = default;
  ParkedSpawn(ParkedSpawn&&) noexcept = default;
  ParkedSpawn& operator=(ParkedSpawn&&) noexcept = default;

  /// Whether it is parked still: started, not yet used, and alive.
  bool valid() const;
  pid_t pid() const { return child_.pid(); }

  /// Makes the parked child `options`' program, as Spawn would start it (its cgroups were
  /// entered already: options.cgroup_procs_fds must be empty), and waits until it has exec'ed.
  /// Throws Error(kFailed) when the program could not be started; the child is then reaped.
  ChildProcess Exec(const SpawnOptions& options) &&;

 private:
  ChildProcess child_;
  UniqueFd control_;  ///< the daemon's end of the socket pair
};

/// The parked program's part: waits on `control_fd` for its program and becomes it (never
/// returns then). Returns 0 when the daemon closed the socket without a word (nothing to do),
/// or an exit status after reporting a malformed message.
int RunParked(int control_fd);

}  // namespace sandboxd
