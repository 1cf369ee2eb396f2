#pragma once
/// Turns a caller's JobRequest into a running Job in a sandbox: its working directory and
/// environment, bwrap's command line with what the job may not see, the tty program, user mode's
/// overlay program, one of the owner's job slots, captured output, the quota watch, its cgroup
/// and limits; and after its end, the settling that takes in what it changed (job_settling.h).
/// Authorization is not its business: the face asks polkit before it calls here (for network
/// and limits above the defaults: ConsentNeeded says which).
/// What only the bus knows (the job's object, the owner's signals) comes in as JobWatchers.

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/user_slots.h"
#include "jobs/captured_output.h"
#include "jobs/change_feed.h"
#include "jobs/job.h"
#include "jobs/job_limits.h"
#include "jobs/job_request.h"
#include "jobs/job_starts_ahead.h"

namespace sandboxd {

class Sandbox;
class SightStore;

/// The daemon's settings a job is made with (from its options and sandboxd.conf).
struct JobSettings {
  std::string bwrap_path;
  std::string helper_path;  ///< sandboxd-helper; the tty and user-overlay programs are beside it
  bool user_mode = false;
  std::string run_dir;     ///< every sandbox's merged views: hidden from jobs
  std::string state_dir;   ///< hidden from jobs in user mode (it is the user's there)
  std::string output_dir;  ///< captured output (captured_output.h)
  std::vector<std::string> hidden_paths;  ///< [Jobs] HiddenPaths=
  bool hide_other_homes = true;           ///< [Jobs] HideOtherHomes=
  JobLimits default_limits;               ///< [Limits] DefaultMemoryMax=, DefaultTasksMax=
  size_t max_running_jobs_per_user = 64;  ///< [Limits] MaxRunningJobsPerUser=
  std::string hidden_file_stand_in;       ///< bound over hidden files (hidden_paths.h)
  std::optional<std::string> cgroups;     ///< where jobs' cgroups go; none: pid namespaces only
  /// [Network] AllowedHosts=: hosts any job may be allowed without polkit.
  std::vector<network::HostRule> admin_hosts;
  /// What a job allowed some hosts sees as /etc/resolv.conf and /etc/hosts (the daemon's name
  /// server alone, and no name of the host's: every lookup goes to the forwarder).
  std::string job_resolv_conf;
  std::string job_hosts;
};

/// What the launcher uses of the running daemon, by reference (it outlives every job).
struct JobLauncherParts {
  JobSettings settings;
  UserSlots& slots;  ///< jobs running per owner
  std::shared_ptr<OutputBudget> output_budget;
  const LimitControllers& limits;
  SightStore& sights;
  /// When the sandbox last agreed with the live tree (commit_runner.h AgreedUsec).
  std::function<int64_t(const Sandbox&)> agreed_usec;
  /// At a job's end, before anyone hears of it: the decisions made while it ran, checked against
  /// the bytes it left (decide_operation.h CheckBoundDecisions).
  std::function<void(const Sandbox&)> check_decisions = {};
  /// As a job's sights are first recorded (while the live tree is still as the job saw it
  /// where they are not unseen): what their live git indexes stage (git_index_sights.h).
  std::function<void(const Sandbox&, const std::map<std::pair<size_t, std::string>, std::string>&)> sighted = {};
  /// At a job's end, before anyone hears of it, with the settling's unseen_from_ns: the sights
  /// that cannot wait for the settling (git_index_sights.h SightGitIndexesNow).
  std::function<void(const Sandbox&, int64_t)> sight_now = {};
  /// The next job's start made ahead, where the daemon makes one (none in tests that need none).
  JobStartsAhead* starts_ahead = nullptr;
};

/// What the bus does at a job's moments. Each runs on the job's monitor thread but `publish`.
struct JobWatchers {
  /// Before the job starts, so that its object exists before its first signal; a throw here
  /// means the job never starts (its slot and its count in the sandbox are given back).
  std::function<void(const std::shared_ptr<Job>&)> publish;
  /// When a published job does not start after all: it never ran, so it is not listed (as
  /// finished or otherwise) and no one can wait on it.
  std::function<void(const std::shared_ptr<Job>&)> unpublish;
  std::function<void(const JobEnd&)> finished;      ///< first, so Job.Wait answers at once
  std::function<void(uint64_t captured_bytes)> output;
  /// After each settling pass: the number of changes it counted (none when it failed).
  std::function<void(std::optional<size_t> changes)> settled;
  std::function<void()> ended;  ///< last (the object table prunes old jobs)
  /// What the sandbox's running jobs change, as it happens (change_feed.h), on the feed's
  /// thread; none: no feed is followed for this job.
  SeenSink seen;
};

/// What a job asks that the owner's own say does not cover: polkit is asked first.
struct JobConsent {
  bool network = false;    ///< network in a sandbox made without it
  /// Hosts beyond the sandbox's own and the administrator's list, as FormatHostRules writes
  /// them; "" if none.
  std::string hosts;
  std::string above;       ///< limits above the defaults, as "memory_max 2G" (job_limits.h); "" if none
};

class JobLauncher {
 public:
  explicit JobLauncher(JobLauncherParts parts);

  JobConsent ConsentNeeded(const Sandbox& sandbox, const JobRequest& request) const;
  /// The hosts a job may reach by name: its own, or else its sandbox's (none for a job given
  /// the whole network). None: the network is all or nothing for it.
  static std::vector<network::HostRule> HostsOf(const Sandbox& sandbox, const JobOptions& options);
  /// Starts `request` in `sandbox` (the caller has authorized it and any JobConsent). Throws
  /// Error naming the sandbox, path or limit that refuses it, and then nothing has started.
  std::shared_ptr<Job> Launch(const std::shared_ptr<Sandbox>& sandbox, JobRequest request, JobWatchers watchers);

 private:
  /// bwrap's command line and options, and the rest of the launch but what only Launch holds.
  JobLaunch Assemble(const Sandbox& sandbox, JobRequest& request, const UserCredentials& user) const;
  /// Asked when the sandbox's quota is watched (a soft quota): refuses a sandbox already over
  /// it, and returns the watch.
  std::function<bool()> QuotaWatch(const std::shared_ptr<Sandbox>& sandbox) const;
  /// The sandbox's live change feed for one more job (none when the watchers want none, or
  /// when it cannot be had: that is logged, and the job runs without).
  std::shared_ptr<ChangeFeed> FeedFor(const std::shared_ptr<Sandbox>& sandbox, const JobWatchers& watchers);

  JobLauncherParts parts_;
  ChangeFeeds feeds_;
};

}  // namespace sandboxd
