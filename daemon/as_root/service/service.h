#pragma once
/// The running daemon: it owns every part (store, registry, commit runner, authority, call
/// gate, object table, ...), starts them in machined's order, runs the bus loop, the heartbeat
/// (status, watchdog, idle exit) and garbage collection's ticker. The D-Bus faces never see it:
/// each is given the parts it uses (bus/face_parts.h).

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

#include "runtime/ticker.h"
#include "runtime/user_slots.h"
#include "bus/bus_loop.h"
#include "bus/bus_peers.h"
#include "bus/call_gate.h"
#include "bus/caller.h"
#include "bus/caller_watch.h"
#include "bus/dbus_util.h"
#include "bus/loop_probe.h"
#include "bus/object_table.h"
#include "bus/polkit.h"
#include "bus/sandbox_announcer.h"
#include "commit/commit_journal.h"
#include "commit/commit_runner.h"
#include "config/daemon_config.h"
#include "config/daemon_options.h"
#include "jobs/job.h"
#include "jobs/job_launcher.h"
#include "lifecycle/garbage_collector.h"
#include "lifecycle/sandbox_removal.h"
#include "lifecycle/suspension.h"
#include "helper_clients/helper_client.h"
#include "review/review.h"
#include "review/review_log.h"
#include "sandbox/layout.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox_registry.h"
#include "service/service_status.h"
#include "store/store.h"

namespace sandboxd {

class ManagerDBus;

class Service {
 public:
  explicit Service(DaemonOptions options);
  ~Service();

  /// Start-up in machined's order, then the bus loop until Stop(). Returns the exit code.
  int Run();
  void Stop();

 private:
  /// A root-owned mode-0000 empty file, bound over hidden files in jobs (hidden_paths.h).
  std::string HiddenFileStandIn() const { return layout_.run_dir() + "/hidden"; }
  std::string JobResolvConf() const { return layout_.run_dir() + "/job-resolv.conf"; }
  std::string JobHosts() const { return layout_.run_dir() + "/job-hosts"; }
  static void WriteJobNameFile(const std::string& path, const std::string& text);
  void SetUpDirectories();
  /// [Storage] MaxQuota= given as a percentage, in bytes of the state's file system (logged).
  void ResolveStorageShares();
  // Run's start-up, in this order (machined's): the state and what reads it, the sandboxes
  // settled from their journals, what jobs need, every object on the bus and then the name,
  // and the work beside the calls (garbage collection, the heartbeat, the host's trials).
  void OpenState();
  void RecoverSandboxes();
  void PrepareJobs();
  void Publish();
  void StartBackgroundWork();
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
  /// Owner-side work: sandboxd-helper and its siblings as each sandbox's owner.
  std::unique_ptr<HelperPrograms> helpers_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<SandboxRegistry> registry_;
  std::unique_ptr<Authority> authority_;
  std::unique_ptr<CommitJournal> journal_;
  std::unique_ptr<CommitRunner> commits_;
  std::unique_ptr<Suspension> suspension_;
  std::unique_ptr<ApprovalStore> approvals_;
  std::unique_ptr<ReviewLog> review_log_;
  std::unique_ptr<SightStore> sights_;
  std::unique_ptr<Review> review_;
  std::unique_ptr<sdbus::IConnection> connection_;
  BusLoop loop_;  ///< runs connection_
  std::unique_ptr<BusPeers> peers_;  ///< over a connection of its own (bus_directory_dbus.h)
  std::unique_ptr<SandboxAnnouncer> announcer_;  ///< the Manager's lifecycle signals; outlives the faces
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

  /// The next job's start, made ahead (system mode); goes after the jobs, before their cgroups' parent.
  std::unique_ptr<JobStartsAhead> starts_ahead_;
  std::unique_ptr<JobLauncher> jobs_;  ///< outlives every job: objects_ (which ends them) goes first
  std::unique_ptr<ObjectTable> objects_;  ///< the sandboxes' and jobs' objects, over connection_

  std::unique_ptr<CallGate> calls_;
  UserSlots job_slots_;
  std::shared_ptr<OutputBudget> output_budget_;
};

}  // namespace sandboxd
