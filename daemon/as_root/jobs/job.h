#pragma once
/// One command running in a sandbox: its bwrap child, the monitor thread that collects its
/// status and captured output, and its end state. The process tree dies with the Job: its
/// cgroup is killed whole where there is one (job_cgroup.h), and bwrap is killed, which ends
/// the job's pid namespace and everything in it; so nothing of a job outlives the daemon's
/// knowledge of it.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"
#include "base/parked_spawn.h"
#include "base/process.h"
#include "jobs/captured_output.h"
#include "jobs/job_cgroup.h"
#include "jobs/job_limits.h"
#include "jobs/job_namespace.h"
#include "jobs/job_network.h"

namespace sandboxd {

enum class JobState { kRunning, kFinished };
std::string_view ToString(JobState state);

/// Why a job ended; its name is the API's (Job.Wait, the Finished signal, sandboxctl).
enum class JobEndReason {
  kExited,        ///< the command ended by itself
  kFailed,        ///< the sandbox could not be set up, or bwrap died without a status
  kCancelled,     ///< Job.Cancel, or its sandbox went
  kTimeout,       ///< its --timeout passed
  kDisconnected,  ///< the client that started it left the bus
  kMemory,        ///< the kernel killed one of its processes for its memory limit
  kQuota,         ///< the sandbox's quota was full
};
std::string_view ToString(JobEndReason reason);

struct JobEnd {
  int exit_status = 0;  ///< the command's status, 128+N for signal N
  JobEndReason reason = JobEndReason::kExited;
};

struct JobLaunch {
  /// The command line started (bwrap's, bwrap_args.h; in user mode behind the program that
  /// mounts the overlays first). It runs with an empty environment: the job's variables are
  /// among bwrap's options, for the command alone.
  std::vector<std::string> argv;
  /// What bwrap reads from fd kArgsFd (--args): every option, out of other users' sight.
  std::string args_data;
  std::string cwd = "/";
  UserCredentials user;
  UniqueFd stdin_fd;    ///< invalid → /dev/null
  UniqueFd stdout_fd;   ///< invalid → captured into `output`
  UniqueFd stderr_fd;   ///< invalid → captured into `output`
  /// Where captured output goes; required when stdout_fd or stderr_fd is invalid.
  std::unique_ptr<CapturedOutput> output;
  std::chrono::seconds timeout{0};  ///< killed (reason "timeout") after this long; 0: never
  /// How long bwrap may take to report a pid namespace that checks out before the job is given
  /// up (reason "failed"; its command never runs).
  std::chrono::milliseconds namespace_report_timeout = std::chrono::seconds(20);
  std::unique_ptr<JobCgroup> cgroup;  ///< where the job runs, if cgroups are used (job_cgroup.h)
  std::unique_ptr<JobLimitGroups> limits;  ///< its memory and process limits, if any (job_limits.h)
  /// Asked every so often while the job runs (at least kQuotaCheckInterval apart, and ten
  /// times as long as the last answer took): true ends the job with reason "quota".
  std::function<bool()> over_quota;
  /// bwrap starts in a mount namespace without any sandbox's overlay but its own
  /// (private_mounts.h); none in user mode, where the daemon mounts none.
  std::optional<MountPruning> mounts;
  /// The job's start on the file clock (Sandbox::BeginJob): its command runs only once the file
  /// clock is past it, so that everything the job changes has a ctime after it.
  int64_t start_mark = 0;
  /// A child parked in the job's cgroups already (job_starts_ahead.h), to become bwrap; none:
  /// bwrap is spawned at the start and enters the cgroups itself.
  ParkedSpawn starter;
  /// Sets up the job's network (job_network.h) once its namespaces are known and checked,
  /// before its command runs, given the verified first process; a throw ends the job as
  /// "failed" before the command runs. None: the job's network needs nothing of the daemon.
  std::function<std::shared_ptr<JobNetwork>(pid_t pid, int pidfd)> network;
  /// An offline job (no network, no hosts): count what of it found no route (no_route_count.h),
  /// so that the owner hears why a lookup failed.
  bool count_no_route = false;
};

class Job {
 public:
  /// Where bwrap finds its JSON status pipe and its options (bwrap_args.h).
  static constexpr int kStatusFd = 3;
  static constexpr int kArgsFd = 4;
  /// Where the sandbox waits for the daemon's go before it runs the command (bwrap --block-fd):
  /// the command never runs before the daemon knows the job's pid namespace (job_senders.h).
  static constexpr int kBlockFd = 5;
  /// bwrap's status output kept at most: the owner can write into that pipe, the daemon's
  /// memory is not theirs to fill.
  static constexpr size_t kStatusTextCap = 64 << 10;
  /// Output kept for fd-less callers (captured_output.h); more is dropped and OutputTruncated set.
  static constexpr uint64_t kOutputCap = 8 << 20;
  using FinishedCallback = std::function<void(const JobEnd&)>;
  /// Told the size of the captured output when it grew, at most every kOutputNotifyInterval
  /// (and not at the end: the job's end says it all).
  using OutputCallback = std::function<void(uint64_t captured_bytes)>;
  static constexpr std::chrono::milliseconds kOutputNotifyInterval{100};
  static constexpr std::chrono::milliseconds kQuotaCheckInterval{250};
  /// How long the processes left in an ended job's cgroup (exiting, as a rule) are given to
  /// leave before they are killed (JobCgroup::EndRemains).
  static constexpr std::chrono::milliseconds kEndRemainsGrace{100};

  Job(std::string id, std::string sandbox_id, std::vector<std::string> argv);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// Starts bwrap; `on_finished` runs once on the monitor thread when the job has ended.
  void Start(JobLaunch launch, FinishedCallback on_finished, OutputCallback on_output = {});
  /// Kills the whole job (bwrap and its pid namespace); `reason` becomes the reason it ended
  /// (the first one given wins). Harmless when finished.
  void Cancel(JobEndReason reason = JobEndReason::kCancelled);
  /// Calls `callback` once the job has ended (at once if it has).
  void WhenFinished(FinishedCallback callback);
  /// Only from inside Start's `on_finished`: `work` runs on the monitor thread once every
  /// WhenFinished callback has run (work whose cost must not delay the answers they send).
  void ThenAfterWaiters(std::function<void()> work);

  const std::string& id() const { return id_; }
  const std::string& sandbox_id() const { return sandbox_id_; }
  const std::vector<std::string>& argv() const { return argv_; }
  /// When it was made (microseconds since the epoch): its start, give or take bwrap's.
  int64_t created_usec() const { return created_usec_; }
  /// kFinished once its end has been told to the launcher's waiter, always the first (which
  /// counts the job out of its sandbox): a client that sees it finished finds its sandbox free
  /// of it, and one told of the end by a later waiter sees it finished.
  JobState state() const;
  JobEnd end() const;
  /// When it ended (microseconds since the epoch); 0 while it runs.
  int64_t ended_usec() const;
  /// Which of its output streams sandboxd keeps (the caller passed none of its own for them):
  /// "stdout and stderr", "stdout", "stderr", or "" (sandboxctl run: the caller's own).
  std::string captured_streams() const;
  bool output_truncated() const;
  /// What the job's forwarder refused (job_network.h): the first kMaxKeptRefusals, and how many
  /// distinct ones there were. None for a job without allowed hosts.
  std::vector<network::Refusal> refusals() const;
  size_t refused_count() const;
  /// For an offline job once it has ended: how many of its packets found no route (a lookup or a
  /// connection it could not make for want of a network); 0 otherwise.
  uint64_t no_route_count() const;
  /// For a job that ended "failed" because the daemon could not set it up: one sentence saying
  /// what could not be done (Job.GetStatus "failure"); "" otherwise.
  std::string failure() const;
  std::string ReadOutput(uint64_t offset, uint32_t max_bytes) const;

 private:
  std::shared_ptr<CapturedOutput> output() const;
  void Monitor(UniqueFd status_fd, UniqueFd capture_fd, UniqueFd go_fd, std::chrono::seconds timeout,
               std::chrono::milliseconds report_timeout, OutputCallback on_output, std::function<bool()> over_quota);
  /// Looks at the complete lines of `status_text` from `from` on for bwrap's report of the
  /// job's pid-namespace init, and keeps it once it checks out (job_namespace.h); true then.
  bool NoteNamespaceInit(const std::string& status_text, size_t& from);
  /// Sets up the job's network (JobLaunch::network) once NoteNamespaceInit has the init; false
  /// (the job cancelled as failed, the reason logged) when it could not be.
  bool SetUpNetwork();

  const std::string id_;
  const std::string sandbox_id_;
  const std::vector<std::string> argv_;
  const int64_t created_usec_;
  mutable std::mutex mutex_;
  ChildProcess child_;
  JobState state_ = JobState::kRunning;
  JobEnd end_;
  int64_t ended_usec_ = 0;
  std::string captured_streams_;
  std::optional<JobEndReason> stop_reason_;  ///< why the job was killed; none unless it was
  std::string failure_;                      ///< what the daemon could not set up, if that was it
  std::unique_ptr<JobCgroup> cgroup_;
  std::unique_ptr<JobLimitGroups> limits_;
  UniqueFd namespace_init_;  ///< pidfd of pid 1 of the job's pid namespace, once verified
  pid_t namespace_init_pid_ = -1;  ///< its pid, looked up only while the pidfd shows it alive
  std::function<std::shared_ptr<JobNetwork>(pid_t, int)> network_setup_;  ///< JobLaunch::network
  std::shared_ptr<JobNetwork> network_;  ///< once set up
  bool count_no_route_ = false;           ///< JobLaunch::count_no_route
  UniqueFd offline_netns_;                ///< the offline job's network namespace, to count in at its end
  uint64_t no_route_count_ = 0;
  std::optional<NamespaceId> pid_namespace_;  ///< registered with JobSenders while the job runs
  int64_t start_mark_ = 0;                     ///< JobLaunch::start_mark
  std::shared_ptr<CapturedOutput> output_;  ///< set by Start; readers take a copy under the mutex
  std::vector<FinishedCallback> waiters_;
  /// The waiters of the end were all called (the launcher's first): from then on a new one is
  /// called at once.
  bool waited_ = false;
  /// The launcher's waiter (always the first) has run: the job is counted out of its sandbox.
  bool launcher_told_ = false;
  std::function<void()> after_waiters_;
  std::thread monitor_;
};

}  // namespace sandboxd
