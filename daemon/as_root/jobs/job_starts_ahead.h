#pragma once
/// The next job's start, made ahead of it: a job id, the job's cgroups (job_cgroup.h, and the
/// v1 limit groups of job_limits.h) and a parked child already in them (base/parked_spawn.h),
/// so that the one slow step of a job's start (entering a cgroup waits for an RCU grace period,
/// 9-17 ms here) is taken off the caller's clock. A thread of its own makes the next one as soon
/// as one is taken; a job that comes while it is not ready yet is started as before. Kept for
/// as long as the daemon runs: an idle daemon holds one parked process and its empty cgroups.
///
/// The thread is the parent of every job started through it (bwrap --die-with-parent counts on
/// its parent thread): it lives until this object goes, which must be after every job.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/parked_spawn.h"
#include "jobs/job_cgroup.h"
#include "jobs/job_limits.h"

namespace sandboxd {

struct PreparedJobStart {
  std::string job_id;
  std::unique_ptr<JobCgroup> cgroup;             ///< none where jobs have no cgroup2 group
  std::unique_ptr<JobLimitGroups> limit_groups;  ///< none where no limit is a v1 controller
  ParkedSpawn starter;
};

class JobStartsAhead {
 public:
  /// `starter`: the parked program (sandboxd-job-starter). `cgroups`: where jobs' cgroup2
  /// groups go (JobSettings::cgroups). `limits` outlives this. Nothing is made ahead where a
  /// job would enter no cgroup at all.
  JobStartsAhead(std::string starter, std::optional<std::string> cgroups, const LimitControllers& limits);
  ~JobStartsAhead();
  JobStartsAhead(const JobStartsAhead&) = delete;
  JobStartsAhead& operator=(const JobStartsAhead&) = delete;

  /// The start made ahead, if one is ready (the next is then begun); none otherwise.
  std::optional<PreparedJobStart> Take();

  /// Waits until a start is ready or `timeout` passes; whether one is (for tests).
  bool WaitReady(std::chrono::milliseconds timeout);

 private:
  void Run();
  PreparedJobStart Prepare();

  const std::string starter_;
  const std::optional<std::string> cgroups_;
  const LimitControllers& limits_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<PreparedJobStart> ready_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sandboxd
