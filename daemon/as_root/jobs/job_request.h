#pragma once
/// What a caller asks of a job (Sandbox.Run): the command, where and with what it runs, its
/// streams and its options, checked in form (bus/job_options.h reads the options) but not yet
/// against the sandbox, the configuration or the owner's limits (job_launcher.h).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "unique_fd.h"
#include "jobs/job_limits.h"
#include "network/host_rules.h"

namespace sandboxd {

struct JobOptions {
  bool network = false;           ///< "network" (b): this job may use the network (polkit asks)
  /// "allow_hosts" (as): the hosts this job may reach by name, and nothing else (issue 43;
  /// network/host_rules.h); polkit asks unless the sandbox's own or [Network] AllowedHosts=
  /// cover them. Excludes "network".
  std::vector<network::HostRule> allow_hosts;
  uint64_t timeout_sec = 0;       ///< "timeout_sec" (t): killed after this long; 0 for never
  std::vector<std::string> hide;  ///< "hide" (as): absolute paths made empty and unreadable
  /// "allow_sockets" (as): host sockets this job may reach (host_sockets.h), absolute paths
  std::vector<std::string> allow_sockets;
  bool tty = false;               ///< "tty" (b): stdin is a terminal, to be the job's controlling one
  JobLimits limits;               ///< "memory_max" (t, bytes), "tasks_max" (t): job_limits.h
  bool cwd_fallback = false;      ///< "cwd_fallback" (b): a cwd outside the roots means the first root
  bool live_feed = true;          ///< "live_feed" (b): false: this job starts no live change feed
};

struct JobRequest {
  std::vector<std::string> argv;  ///< never empty
  std::string cwd;                ///< "" for the first root (job_setup.h ResolveJobCwd)
  std::map<std::string, std::string> env;  ///< beside the documented few (JobEnvironment)
  UniqueFd stdin_fd, stdout_fd, stderr_fd;  ///< invalid: /dev/null, captured, captured
  JobOptions options;

  /// A client that hands over its own streams is there for the job's whole life (a terminal, a
  /// pipe it reads): when it goes, the job goes. Captured output is for clients that come back
  /// later, so such a job runs on.
  bool Attached() const { return stdin_fd || stdout_fd || stderr_fd; }
};

}  // namespace sandboxd
