#pragma once
/// Tells whether a process runs inside a job (any sandbox's, any user's), so that the daemon
/// can refuse every call a job makes, through whatever socket it reached the bus (DESIGN.md:
/// a job must never drive sandboxd). It decides only by what the daemon created and a job
/// cannot leave: the job's cgroup (every job's is below the daemon's jobs group, whose
/// cgroup.procs files are root's), and the pid namespaces of running jobs (each verified,
/// job_namespace.h), nested ones included. The pid it is asked about is the one the bus daemon
/// recorded for the caller's connection, never a number the caller sent.

#include <sys/types.h>

#include <mutex>
#include <set>
#include <string>

#include "jobs/job_namespace.h"

namespace sandboxd {

class JobSenders {
 public:
  /// The process-wide instance, which jobs and the D-Bus faces share.
  static JobSenders& Instance();

  /// The jobs' cgroup as /proc/PID/cgroup names it ("0::" paths: from the cgroup2 root),
  /// when jobs run in cgroups (job_cgroup.h); empty otherwise.
  void SetJobCgroup(const std::string& path_from_cgroup2_root);
  void AddJobNamespace(const NamespaceId& id);
  void RemoveJobNamespace(const NamespaceId& id);

  enum class Verdict {
    kOutside,  ///< not in any job
    kInJob,    ///< in a job's cgroup or pid namespace
    kUnknown,  ///< the process is gone (its pid may be another process's by now)
  };
  Verdict Classify(pid_t pid) const;

 private:
  bool InJobCgroup(pid_t pid) const;
  bool InJobNamespace(pid_t pid) const;

  mutable std::mutex mutex_;
  std::string job_cgroup_;
  std::multiset<NamespaceId> namespaces_;
};

/// The path from the cgroup2 root of a cgroup directory under the cgroup2 mount `mount`
/// ("/sys/fs/cgroup/a/b" under "/sys/fs/cgroup" → "/a/b").
std::string PathFromCgroup2Root(const std::string& mount, const std::string& directory);

/// True when the "0::" line of a /proc/PID/cgroup text names `group` or a cgroup below it.
bool CgroupTextIsBelow(const std::string& proc_cgroup_text, const std::string& group);

}  // namespace sandboxd
