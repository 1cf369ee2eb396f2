#pragma once
/// The running daemon: its options, bus connection, sandbox registry, authority, worker
/// threads, and the published D-Bus objects (one per sandbox and per kept job). The D-Bus faces
/// reach shared state only through it.

#include <sdbus-c++/sdbus-c++.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/ticker.h"
#include "base/user_slots.h"
#include "bus/bus_loop.h"
#include "bus/bus_peers.h"
#include "bus/call_gate.h"
#include "bus/caller.h"
#include "bus/caller_watch.h"
#include "bus/dbus_util.h"
#include "bus/loop_probe.h"
#include "bus/polkit.h"
#include "commit/commit_journal.h"
#include "commit/commit_runner.h"
#include "config/daemon_config.h"
#include "jobs/job.h"
#include "lifecycle/garbage_collector.h"
#include "lifecycle/sandbox_removal.h"
#include "lifecycle/suspension.h"
#include "review/review.h"
#include "sandbox/layout.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox_registry.h"
#include "service/service_status.h"
#include "store/store.h"

namespace sandboxd {

class ManagerDBus;
class SandboxDBus;
class JobDBus;

struct DaemonOptions {
  std::string state_dir;
  std::string run_dir;
  std::string helper_path;
  std::string bwrap_path;
  std::string config_path;         ///< sandboxd.conf (its .d/ drop-ins beside it)
  unsigned idle_exit_seconds = 0;  ///< 0: never
  std::string storage_cap;         ///< --storage-cap SIZE: [Storage] Cap= over the configuration's
  /// --user: on the session bus as the user, no polkit, overlays mounted in each job's own
  /// namespaces (user_overlay_main.cpp) rather than on the host.
  bool user_mode = false;
};

class Service {
 public:
  /// Finished jobs kept per sandbox so that their status and output stay readable.
  static constexpr size_t kFinishedJobsKept = 16;

  explicit Service(DaemonOptions options);
  ~Service();

  /// Start-up in machined's order, then the bus loop until Stop(). Returns the exit code.
  int Run();
  void Stop();

  sdbus::IConnection& connection() { return *connection_; }
  SandboxRegistry& registry() { return *registry_; }
  Authority& authority() { return *authority_; }
  CommitRunner& commits() { return *commits_; }
  SightStore& sights() { return *sights_; }
  CommitJournal& journal() { return *journal_; }
  Suspension& suspension() { return *suspension_; }
  Review& review() { return *review_; }
  CallerWatch& callers() { return callers_; }
  /// Jobs running per sandbox owner ([Limits] MaxRunningJobsPerUser=).
  UserSlots& job_slots() { return job_slots_; }
  /// Captured output held per sandbox owner ([Limits] MaxCapturedOutputPerUser=).
  const std::shared_ptr<OutputBudget>& output_budget() const { return output_budget_; }
  /// Who may hear the signals about a user's sandboxes (owner_signal.h).
  BusPeers& peers() { return *peers_; }
  /// Where jobs' cgroups go; nothing when jobs are ended through their pid namespace only.
  const std::optional<std::string>& job_cgroups() const { return job_cgroups_; }
  /// Where jobs' memory and process limits can be set (job_limits.h).
  const LimitControllers& job_limits() const { return job_limits_; }
  const DaemonOptions& options() const { return options_; }
  const Config& config() const { return config_; }
  /// A root-owned mode-0000 empty file, bound over hidden files in jobs (hidden_paths.h).
  std::string HiddenFileStandIn() const { return layout_.run_dir() + "/hidden"; }
  const Layout& layout() const { return layout_; }

  /// Where every call's work runs (call_gate.h).
  CallGate& calls() { return *calls_; }

  std::shared_ptr<SandboxDBus> PublishSandbox(std::shared_ptr<Sandbox> sandbox);
  std::shared_ptr<SandboxDBus> FindSandboxObject(const std::string& id);
  /// Drops the sandbox's object and its jobs' objects (cancelling running jobs).
  void UnpublishSandbox(const std::string& id);
  /// Publishes a job object; returns its path.
  std::shared_ptr<JobDBus> PublishJob(std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox);
  /// Forgets the oldest finished jobs of a sandbox beyond kFinishedJobsKept, never `keep`.
  void PruneJobs(const std::string& sandbox_id, const std::string& keep);
  /// The end of a forgotten sandbox (sandbox_removal.h).
  const SandboxRemoval& removal() const { return *removal_; }
  /// Garbage collection carried out (garbage_collector.h).
  GarbageCollector& garbage() { return *garbage_; }

 private:
  void SetUpDirectories();
  /// Probes whether quotas can be hard limits here (quota_layer.h), tells the registry, and
  /// says which way they are held to.
  void ChooseQuotaMethod();
  /// Says at start-up what of overlayfs and bwrap does not work here (host_check.h).
  void CheckHost();
  /// The same for user mode: a trial job through sandboxd-user-overlay.
  void CheckHostForUserMode();
  std::unique_ptr<sdbus::IConnection> ConnectToBus() const;
  /// Every second (or half the watchdog period): STATUS= when it changed, WATCHDOG=1 when the
  /// bus loop answered, and the end of the loop once idle for --idle-exit seconds.
  void Heartbeat();
  Activity CurrentActivity();
  /// After the loop ended for idleness: true when the daemon may exit (the name is given back
  /// and the calls already queued answered); false when a call came meanwhile and it stays.
  bool LeaveWhenStillIdle(int64_t idle_since_call);

  DaemonOptions options_;
  UniqueFd state_lock_;  ///< first member: released last, when everything else is gone
  Layout layout_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<SandboxRegistry> registry_;
  std::unique_ptr<Authority> authority_;
  std::unique_ptr<CommitJournal> journal_;
  std::unique_ptr<CommitRunner> commits_;
  std::unique_ptr<Suspension> suspension_;
  std::unique_ptr<ApprovalStore> approvals_;
  std::unique_ptr<SightStore> sights_;
  std::unique_ptr<Review> review_;
  std::unique_ptr<sdbus::IConnection> connection_;
  BusLoop loop_;  ///< runs connection_
  std::unique_ptr<BusPeers> peers_;  ///< over a connection of its own (bus_directory_dbus.h)
  std::unique_ptr<ManagerDBus> manager_;
  CallerWatch callers_;
  std::optional<std::string> job_cgroups_;
  LimitControllers job_limits_;
  Config config_;  ///< after the connection: its match goes before the connection does
  std::unique_ptr<SandboxRemoval> removal_;
  std::unique_ptr<GarbageCollector> garbage_;
  Ticker gc_ticker_;
  Ticker heartbeat_;
  std::unique_ptr<LoopProbe> loop_probe_;  ///< only under a systemd watchdog
  uint64_t watchdog_usec_ = 0;
  std::string last_status_;                ///< heartbeat thread only
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> idle_exit_requested_{false};
  std::atomic<int64_t> idle_decided_at_call_{0};  ///< LastCallUsec() when idleness ended the loop

  std::mutex objects_mutex_;
  std::map<std::string, std::shared_ptr<SandboxDBus>> sandbox_objects_;
  std::map<std::string, std::shared_ptr<JobDBus>> job_objects_;
  std::map<std::string, std::deque<std::string>> jobs_by_sandbox_;

  std::unique_ptr<CallGate> calls_;
  UserSlots job_slots_;
  std::shared_ptr<OutputBudget> output_budget_;
};

}  // namespace sandboxd
