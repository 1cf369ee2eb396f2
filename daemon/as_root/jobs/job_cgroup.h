#pragma once
/// A cgroup (v2) of one job, where the machine offers a cgroup2 hierarchy sandboxd may write:
/// the job's first process moves in before exec (SpawnOptions::cgroup_procs_fd), so every
/// process the job ever starts is there, and cgroup.kill ends them all at once, with no race
/// against a job that is forking. Where there is none (a container without a writable cgroup2,
/// kernels before 5.14), jobs are ended through their pid namespace instead (job.h).

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "unique_fd.h"

namespace sandboxd {

/// The mount point of the cgroup2 hierarchy ("" if none): a pure v2 system has it at
/// /sys/fs/cgroup, a hybrid one at /sys/fs/cgroup/unified.
std::string Cgroup2Mount();

/// Where sandboxd makes its jobs' cgroups: "sandboxd-jobs" below the daemon's own cgroup in
/// the cgroup2 hierarchy (under systemd the unit's, which Delegate=yes hands to us), made at
/// start-up, where the cgroups a dead daemon's jobs left are killed and removed. Nothing when
/// the hierarchy is missing, read-only, or cannot kill a whole cgroup (`why` then says what is
/// missing, for the start-up log).
/// Each daemon instance has its own such cgroup, named for its run directory unless that is the
/// default one (a test daemon must never sweep the jobs of the machine's).
std::optional<std::string> PrepareJobCgroups(const std::string& run_dir, std::string& why);
/// The name of this daemon's jobs' group ("sandboxd-jobs", or "sandboxd-jobs@<run dir>" for a
/// daemon with another run directory), in every cgroup hierarchy it uses.
std::string JobCgroupsName(const std::string& run_dir);

class JobCgroup {
 public:
  /// Makes `parent`/`name`; throws Error naming it on failure.
  JobCgroup(const std::string& parent, const std::string& name);
  /// Takes on an existing cgroup at `path` (one a dead daemon left), to kill and remove it.
  enum AdoptTag { kAdopt };
  JobCgroup(const std::string& path, AdoptTag);
  /// Removes the cgroup (empty by then: the job has ended).
  ~JobCgroup();
  JobCgroup(const JobCgroup&) = delete;
  JobCgroup& operator=(const JobCgroup&) = delete;

  /// cgroup.procs, for the job's first process to move itself in.
  int procs_fd() const { return procs_.get(); }
  /// SIGKILL to every process in the cgroup, descendants forked meanwhile included.
  void KillAll();
  /// At a job's end: waits up to `grace` for the processes still in the group to leave (they
  /// are exiting, as a rule), then kills whatever is left (KillAll).
  void EndRemains(std::chrono::milliseconds grace);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  UniqueFd procs_;
};

}  // namespace sandboxd
