#pragma once
/// Memory and process-count limits of jobs, through the kernel's memory and pids cgroup
/// controllers: in the cgroup2 hierarchy where that has them (a pure cgroup2 system, where
/// sandboxd moves itself into a leaf of its own cgroup so that the controllers can be handed
/// down to its jobs' cgroups), else in the v1 memory and pids hierarchies of a hybrid system
/// (like the docker hosts the tests run on). A job given a limit gets a cgroup of its own in
/// each place, which its first process enters before exec (SpawnOptions::cgroup_procs_fds), so
/// that nothing the job starts escapes the limit. Where no controller can be used, a limit is
/// refused (never silently ignored).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "unique_fd.h"

namespace sandboxd {

struct JobLimits {
  uint64_t memory_max = 0;  ///< bytes of memory (swap included where the kernel counts it); 0: none
  uint64_t tasks_max = 0;   ///< processes and threads at once; 0: none
  bool any() const { return memory_max != 0 || tasks_max != 0; }
};

/// The smallest limits accepted: below them not even bwrap can start the job.
inline constexpr uint64_t kMinJobMemoryMax = 8ull << 20;
inline constexpr uint64_t kMinJobTasksMax = 4;

/// One job's limit cgroups; removed (once empty) when destroyed.
class JobLimitGroups {
 public:
  JobLimitGroups() = default;
  ~JobLimitGroups();
  JobLimitGroups(const JobLimitGroups&) = delete;
  JobLimitGroups& operator=(const JobLimitGroups&) = delete;

  /// cgroup.procs of each cgroup the job's first process must enter (the v1 ones; a v2 limit
  /// is set on the job's own cgroup, job_cgroup.h, which it enters anyway).
  std::vector<int> procs_fds() const;
  /// Whether the kernel killed a process of the job for going over its memory limit.
  bool MemoryLimitHit() const;

 private:
  friend class LimitControllers;
  struct Group {
    std::string path;
    UniqueFd procs;
    bool owned = true;       ///< made for the job (v1), removed with it
    std::string controller;  ///< "memory" or "pids"
  };
  std::vector<Group> groups_;
  std::string memory_events_;  ///< memory.events (v2) or memory.oom_control (v1) of the job
};

class LimitControllers {
 public:
  /// What this machine offers sandboxd's jobs. `v2_jobs_parent` is where the jobs' cgroup2
  /// groups go (PrepareJobCgroups), if anywhere; `jobs_group_name` names this daemon's groups in
  /// the v1 hierarchies the same way. `log` receives a line for the start-up log.
  static LimitControllers Discover(const std::optional<std::string>& v2_jobs_parent, const std::string& jobs_group_name,
                                   std::string& log);

  /// Removes this daemon's jobs' groups in the v1 hierarchies (at stop, when they are empty).
  void Release() const;

  bool memory() const { return !memory_parent_.empty(); }
  bool tasks() const { return !pids_parent_.empty(); }
  /// Whether a job gets a v1 group of its own (MakeGroups makes some).
  bool MakesV1Groups() const { return (!memory_parent_.empty() && !memory_v2_) || (!pids_parent_.empty() && !pids_v2_); }

  /// Sets `limits` for the job `name` ("job-<id>") whose cgroup2 group is `v2_group` ("" if it
  /// has none). Throws Error(kInvalidArgument) naming what is missing when a limit cannot be
  /// had here, and Error naming the file when one cannot be set.
  /// `premade`: the groups MakeGroups made for this job (a process is in them already); they
  /// are used rather than made, and kept with no limit where `limits` sets none.
  std::unique_ptr<JobLimitGroups> Apply(const std::string& name, const JobLimits& limits, const std::string& v2_group,
                                        std::unique_ptr<JobLimitGroups> premade = nullptr) const;

  /// The v1 groups a job `name` gets (memory and pids, each where it is a v1 controller here),
  /// made ahead of the job and with no limit yet, for a process to enter before the job is
  /// known (job_starts_ahead.h); null when there are none to make. Throws Error naming the group.
  std::unique_ptr<JobLimitGroups> MakeGroups(const std::string& name) const;

  /// The part of Discover that reads no files: where a controller's jobs go, given the v1
  /// mount point of the controller ("" if none), the daemon's own group in that hierarchy and
  /// the group name. Public for tests.
  static std::string V1Parent(const std::string& mount, const std::string& own, const std::string& name);

 private:
  /// Makes the v1 group at `path` for `controller` and opens its cgroup.procs.
  static JobLimitGroups::Group MakeV1Group(const std::string& path, const std::string& controller);

  std::string memory_parent_, pids_parent_;
  bool memory_v2_ = false, pids_v2_ = false;
};

/// The limits as the start-up log and refusals name them: "memory 64 MiB, 100 tasks".
std::string DescribeLimits(const JobLimits& limits);

/// The limits a job runs with: each it asked for, else the administrator's default ([Limits]
/// DefaultMemoryMax=, DefaultTasksMax=) where this machine has the controller for it. A
/// default that cannot be had is left out, not refused: the start-up log says which
/// controllers there are, and a job must not fail for a limit its owner never asked for.
JobLimits WithDefaults(const JobLimits& asked, const JobLimits& defaults, bool memory_available, bool tasks_available);

/// What of `asked` goes beyond `defaults` ("memory 1 GiB, above [Limits] DefaultMemoryMax=512
/// MiB"), "" if nothing: the default bounds what a user may give themselves, and more is an
/// administrator's to grant (polkit's manage action).
std::string AboveDefaults(const JobLimits& asked, const JobLimits& defaults);

}  // namespace sandboxd
