#include "service/service.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include <spdlog/spdlog.h>

#include <chrono>

#include "api.h"
#include "base/errors.h"
#include "base/fs_util.h"
#include "base/overlay.h"
#include "base/private_mounts.h"
#include "base/process.h"
#include "bus/bus_directory_dbus.h"
#include "bus/dbus_util.h"
#include "bus/job_dbus.h"
#include "bus/manager_dbus.h"
#include "bus/sandbox_dbus.h"
#include "changes/git_index_sights.h"
#include "changes/rename_finder.h"
#include "config.h"
#include "jobs/job_senders.h"
#include "logging/log.h"
#include "operations/decide_operation.h"
#include "helper_clients/helper_client.h"
#include "review/decision_pins.h"
#include "sandbox/quota_layer.h"
#include "sandbox/usage.h"
#include "service/host_trials.h"
#include "units.h"
#include "service/state_lock.h"

namespace sandboxd {
namespace {

/// How far one call's output (a diff, a change list) may run ahead of its reader, on disk
/// (output_relay.h): a caller that does not read costs the daemon no more than this per call,
/// and [Limits] MaxCallsInFlightPerUser= such calls.
constexpr uint64_t kMaxUnreadOutput = uint64_t{256} << 20;
constexpr std::chrono::seconds kGcInterval{60};
}  // namespace

Service::Service(DaemonOptions options)
    : options_(std::move(options)), layout_(options_.state_dir, options_.run_dir, options_.user_mode) {}

std::unique_ptr<sdbus::IConnection> Service::ConnectToBus() const {
  return options_.user_mode ? sdbus::createSessionBusConnection() : sdbus::createSystemBusConnection();
}

Service::~Service() {
  heartbeat_.Stop();
  gc_ticker_.Stop();
  if (calls_) calls_->WaitForCalls();
  if (objects_) objects_->Clear();
  manager_.reset();
  // Its thread is the parent of the jobs started through it: only once they are gone.
  starts_ahead_.reset();
  // The jobs' cgroup parent goes with the daemon when no job is left in it (a test daemon's,
  // named for its run directory, would otherwise stay behind for good).
  if (job_cgroups_) rmdir(job_cgroups_->c_str());
  job_limits_.Release();
}

void Service::ResolveStorageShares() {
  StorageConfig& storage = config_.storage;
  if (storage.max_quota_percent == 0) return;
  struct statvfs vfs;
  if (statvfs(layout_.state_dir().c_str(), &vfs) != 0) ThrowErrno("cannot measure the file system of " + layout_.state_dir());
  ResolveMaxQuota(storage, uint64_t{vfs.f_blocks} * vfs.f_frsize);
  spdlog::info("[Storage] MaxQuota={}% is {} of the file system that holds {}: the most a sandbox may hold without polkit's "
               "manage action, and the quota of one created without --quota{}",
               storage.max_quota_percent, units::HumanBytes(storage.max_quota_bytes), layout_.state_dir(),
               storage.default_quota_bytes != 0 ? " (DefaultQuota= is theirs here)" : "");
}

void Service::SetUpDirectories() {
  // State holds users' changes: root only. The run dir must be traversable so that each owner
  // can reach their own 0700 sandbox directory below it.
  MakeDirectories(layout_.state_dir(), 0700);
  MakeDirectory(layout_.state_dir(), 0700);
  // Before anything of the state is touched. A daemon that --idle-exit is ending still holds
  // it for a moment when activation starts the next one: wait that long, not for ever.
  state_lock_ = LockStateDirectory(layout_.state_dir(), std::chrono::seconds(20));
  MakeDirectory(layout_.SandboxesDir(), 0700);
  PrepareOutputDir(layout_.OutputDir());
  // In user mode nobody else has anything there.
  MakeDirectories(layout_.run_dir(), options_.user_mode ? 0700 : 0755);
  MakeDirectory(layout_.run_dir(), options_.user_mode ? 0700 : 0755);
  // The tree of the merged views, which every job's namespace leaves out but for its own
  // sandbox's (base/private_mounts.h). In user mode the daemon mounts nothing.
  if (!options_.user_mode) MakePrivateMountTree(layout_.run_dir());
  // Readable by no job (root is not mapped in a job's user namespace), in a directory every
  // owner's bwrap can reach.
  std::string stand_in = HiddenFileStandIn();
  unlink(stand_in.c_str());
  UniqueFd file(open(stand_in.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0));
  if (!file || fchmod(file.get(), 0) != 0) ThrowErrno("cannot create " + stand_in);
  // What a job allowed some hosts sees as /etc/resolv.conf and /etc/hosts (job_setup.h):
  // read by every owner's bwrap, the same for every job.
  WriteJobNameFile(JobResolvConf(),
                   "# sandboxd: this job may reach some hosts by name; the daemon's name server answers for them.\n"
                   "nameserver 127.0.0.53\n");
  WriteJobNameFile(JobHosts(), "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n");
}

void Service::WriteJobNameFile(const std::string& path, const std::string& text) {
  unlink(path.c_str());
  UniqueFd file(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!file || fchmod(file.get(), 0644) != 0 || write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    ThrowErrno("cannot create " + path);
}

void Service::OpenState() {
  helpers_ = std::make_unique<HelperPrograms>(options_.helper_path);
  store_ = std::make_unique<Store>(layout_.Database());
  registry_ = std::make_unique<SandboxRegistry>(layout_, *store_);
  registry_->SetLimits(config_.limits.max_sandboxes_per_user, config_.limits.max_roots_per_sandbox);
  registry_->SetHardQuotas(QuotasCanBeHard(layout_, options_.user_mode));
  journal_ = std::make_unique<CommitJournal>(*store_);
  sights_ = std::make_unique<SightStore>(*store_);
  registry_->SetLinkedUp([this](const Sandbox& sandbox, size_t root, const std::vector<std::string>& paths) {
    try {
      RecordLinkedUpSights(*sights_, sandbox, root, paths);
    } catch (const std::exception& e) {
      LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "sandbox {}: cannot record what it holds of hard links: {}",
               sandbox.id(), e.what());
    }
  });
  commits_ = std::make_unique<CommitRunner>(layout_, *journal_, *sights_, *helpers_);
  approvals_ = std::make_unique<ApprovalStore>(*store_);
  review_log_ = std::make_unique<ReviewLog>(*store_);
  suspension_ = std::make_unique<Suspension>(*store_, *approvals_, config_.storage.archive_compression_level,
                                             ArchiveHelper(BesideHelper(options_.helper_path, "sandboxd-archive-helper")));
  review_ = std::make_unique<Review>(*approvals_, [this](const SandboxReader& sandbox, const std::vector<RootChanges>& scan) {
    return FindRenames(*helpers_, sandbox, scan);
  });
}

void Service::RecoverSandboxes() {
  auto finish_commits = [this](Sandbox& sandbox) {
    LogSubject subject{sandbox.id(), sandbox.owner()};
    if (std::string line = suspension_->Recover(sandbox); !line.empty()) LogAbout(subject, spdlog::level::warn, "{}", line);
    const bool settling = !journal_->Unfinished(sandbox.id()).empty();
    if (settling) {
      sandbox.Unmount();  // an overlay must not be mounted while its layers change
      for (const auto& line : commits_->Recover(sandbox)) LogAbout(subject, spdlog::level::warn, "{}", line);
    }
    // A record whose layers are gone (deleted by hand, a lost disk) comes back empty: say so.
    // Not after settling cut-off work: a commit of the whole upper layer, finished, has taken
    // the layer for its backups, and its successor is made when the sandbox is set up (the
    // load test saw that warning given for a commit then finished whole).
    for (size_t i = 0; i < sandbox.roots().size(); ++i)
      if (!settling && sandbox.gate().active() && access(sandbox.paths().UpperDir(i).c_str(), F_OK) != 0)
        LogAbout(subject, spdlog::level::warn, "sandbox {}: the changes of root {} are missing from {}; it comes back without them",
                 sandbox.id(), sandbox.roots()[i], sandbox.paths().UpperDir(i));
    // Decisions a commit pinned before it moved entries (decision_pins.h), or left waiting for
    // its outcome, that a kill left so.
    if (sandbox.gate().active() && access(sandbox.paths().UpperDir(0).c_str(), F_OK) == 0) {
      try {
        review_->SettleAwaitedCommits(sandbox, *journal_);
        PinDecisionsToLayers(*approvals_, sandbox);
        // No job outlives a restart: a decision bound to bytes a job may have changed through a
        // mapping before it died is checked now, not only at the next commit (approval.h).
        CheckBoundDecisions({.review = *review_, .commits = *commits_, .journal = *journal_, .sights = *sights_, .helpers = *helpers_, .review_log = *review_log_},
                            sandbox);
      } catch (const std::exception& e) {
        LogAbout(subject, spdlog::level::warn, "sandbox {}: cannot pin its decisions again: {}", sandbox.id(), e.what());
      }
    }
  };
  for (const auto& [id, reason] : registry_->Recover(finish_commits))
    LogAbout({id}, spdlog::level::err, "sandbox {} could not be set up again: {}", id, reason);
  try {
    for (const auto& id : registry_->SweepOrphans()) LogAbout({id}, spdlog::level::info, "removed the remains of sandbox {}", id);
  } catch (const std::exception& e) {
    spdlog::warn("cannot remove the remains of sandboxes: {}", e.what());
  }
}

void Service::PrepareJobs() {
  if (options_.user_mode)
    authority_ = std::make_unique<OwnUserAuthority>();
  else
    authority_ = std::make_unique<PolkitAuthority>();
  std::string no_cgroups;
  job_cgroups_ = PrepareJobCgroups(layout_.run_dir(), no_cgroups);
  if (job_cgroups_) {
    spdlog::info("jobs run in cgroups below {}: each is killed whole", *job_cgroups_);
    // Calls from a process in one of them are refused (job_senders.h).
    JobSenders::Instance().SetJobCgroup(PathFromCgroup2Root(Cgroup2Mount(), *job_cgroups_));
  }
  else
    spdlog::info("jobs are ended through their pid namespace ({})", no_cgroups);
  // (sandboxd-job-exec closes them in each job where the kernel can.)
  if (long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION); abi >= 6)
    spdlog::info("jobs reach no abstract unix socket of the host, with the network too (Landlock ABI {})", abi);
  else
    spdlog::warn("this kernel cannot close the host's abstract unix sockets to jobs (Landlock ABI {}, 6 needed): a job with the "
                 "network can reach them (X11's, session buses')", abi < 0 ? 0 : abi);
  // Sockets by path: a job's /run, /tmp and /var/tmp are its own and every other socket the host
  // has bound is hidden when the job starts (host_sockets.h). No Landlock ABI of this kernel
  // restricts connect() by path (LANDLOCK_ACCESS_FS_RESOLVE_UNIX comes with ABI 9), so what is
  // bound later, or in another network namespace, is not covered: said once, here.
  spdlog::warn("jobs see no unix socket the host had bound by a path when they started, nor any in /run and /tmp; one bound "
               "later elsewhere in their view (the owner's home, /var) stays reachable until they end: this kernel has no "
               "Landlock rule for connecting to sockets by path");
  std::string limits_line;
  job_limits_ = LimitControllers::Discover(job_cgroups_, JobCgroupsName(layout_.run_dir()), limits_line);
  spdlog::info("{}", limits_line);

  if (!options_.user_mode)
    starts_ahead_ = std::make_unique<JobStartsAhead>(BesideHelper(options_.helper_path, "sandboxd-job-starter"), job_cgroups_, job_limits_);
  jobs_ = std::make_unique<JobLauncher>(JobLauncherParts{
      .settings = {.bwrap_path = options_.bwrap_path, .helper_path = options_.helper_path, .user_mode = options_.user_mode,
                   .run_dir = layout_.run_dir(), .state_dir = layout_.state_dir(), .output_dir = layout_.OutputDir(),
                   .hidden_paths = config_.jobs.hidden_paths, .hide_other_homes = config_.jobs.hide_other_homes,
                   .default_limits = {config_.limits.default_memory_max, config_.limits.default_tasks_max},
                   .max_running_jobs_per_user = config_.limits.max_running_jobs_per_user,
                   .hidden_file_stand_in = HiddenFileStandIn(), .cgroups = job_cgroups_,
                   .admin_hosts = config_.network.allowed_hosts, .job_resolv_conf = JobResolvConf(), .job_hosts = JobHosts()},
      .slots = job_slots_, .output_budget = output_budget_, .limits = job_limits_, .sights = *sights_,
      .agreed_usec = [this](const Sandbox& sandbox) { return commits_->AgreedUsec(sandbox); },
      .check_decisions = [this](const Sandbox& sandbox) {
        CheckBoundDecisions({.review = *review_, .commits = *commits_, .journal = *journal_, .sights = *sights_, .helpers = *helpers_, .review_log = *review_log_},
                            sandbox);
      },
      .sighted = [this](const Sandbox& sandbox, const Sights& recorded) {
        // A staged digest not read leaves that index to conflict as any file does: never a
        // reason to fail the settling.
        try {
          RecordStagedSights(*sights_, sandbox, *helpers_, recorded);
        } catch (const std::exception& e) {
          LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "sandbox {}: cannot read what its live git index stages: {}",
                   sandbox.id(), e.what());
        }
      },
      .sight_now = [this](const Sandbox& sandbox, int64_t unseen_from_ns) {
        try {
          SightGitIndexesNow(*sights_, sandbox, *helpers_, unseen_from_ns);
        } catch (const std::exception& e) {
          LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "sandbox {}: cannot record its sight of its live git index: {}",
                   sandbox.id(), e.what());
        }
      },
      .starts_ahead = starts_ahead_.get()});
}

void Service::Publish() {
  // Connect without a name, publish every object, and only then ask for the name: a client
  // that sees the name must find everything in place.
  connection_ = ConnectToBus();
  // Signals go to the owner's connections, learnt from the bus daemon at each signal over a
  // connection of their own: this thread runs the bus loop and must never wait for that.
  peers_ = std::make_unique<BusPeers>(std::make_unique<DBusBusDirectory>(ConnectToBus()));
  peers_->ForbidThread(std::this_thread::get_id());
  // A job learns nothing through sandboxd, signals included: a connection whose process runs
  // inside a job (or is gone, so that its pid may be anyone's) is no recipient.
  peers_->SetExcluded([](const std::string&, const PeerIdentity& identity) {
    return JobSenders::Instance().Classify(identity.pid) != JobSenders::Verdict::kOutside;
  });
  announcer_ = std::make_unique<SandboxAnnouncer>(*peers_);
  removal_ = std::make_unique<SandboxRemoval>(*registry_, [this](const Sandbox& sandbox) {
    objects_->UnpublishSandbox(sandbox.id());
    announcer_->Removed(sandbox);
  });
  garbage_ = std::make_unique<GarbageCollector>(*registry_, *store_, *removal_, config_.storage.cap_bytes);
  objects_ = std::make_unique<ObjectTable>(*connection_);
  objects_->SetFaceParts(
      SandboxFaceParts{.calls = *calls_, .authority = *authority_, .peers = *peers_, .callers = callers_, .objects = *objects_,
                       .registry = *registry_,
                       .operations = {.review = *review_, .commits = *commits_, .journal = *journal_, .sights = *sights_,
                                      .helpers = *helpers_, .review_log = *review_log_},
                       .suspension = *suspension_, .removal = *removal_, .jobs = *jobs_, .announcer = *announcer_},
      JobFaceParts{.calls = *calls_, .authority = *authority_, .peers = *peers_});
  manager_ = std::make_unique<ManagerDBus>(
      ManagerFaceParts{.calls = *calls_, .authority = *authority_, .registry = *registry_, .objects = *objects_,
                       .garbage = *garbage_, .announcer = *announcer_, .config = config_, .layout = layout_},
      *connection_);
  callers_.Start(*connection_);
  for (const auto& sandbox : registry_->List(0)) objects_->PublishSandbox(sandbox);
  connection_->requestName(api::kBusName);
  NoteCall();  // an --idle-exit daemon lives that long at least, called or not
  spdlog::info("sandboxd {} ready on the {} bus with {} sandboxes", SANDBOXD_VERSION, options_.user_mode ? "session" : "system",
               registry_->size());
  last_status_ = StatusLine(registry_->size(), 0);
  sd_notifyf(0, "READY=1\nSTATUS=%s", last_status_.c_str());
}

void Service::StartBackgroundWork() {
  gc_ticker_.Start(kGcInterval, [this] {
    try {
      garbage_->Collect();
    } catch (const std::exception& e) {
      spdlog::warn("garbage collection failed: {}", e.what());
    }
  });
  std::chrono::milliseconds beat{1000};
  if (sd_watchdog_enabled(0, &watchdog_usec_) > 0) {
    loop_probe_ = std::make_unique<LoopProbe>(ConnectToBus(), connection_->getUniqueName());
    beat = std::min(beat, std::chrono::milliseconds(watchdog_usec_ / 2000));
    spdlog::info("pinging the systemd watchdog every {} ms", beat.count());
  }
  if (options_.idle_exit_seconds > 0) spdlog::info("exiting after {} s idle", options_.idle_exit_seconds);
  heartbeat_.Start(beat, [this] { Heartbeat(); });
  // The trial overlay and job only inform the log: they run beside the first calls rather
  // than before them, which D-Bus activation makes wait for the daemon's start.
  calls_->RunDaemonWork([this] {
    try {
      TryOverlayAndJobs(layout_, options_);
    } catch (const std::exception& e) {
      spdlog::error("cannot check this machine for overlayfs and jobs: {}", e.what());
    }
  });
  // What a destroy left in the trash (a stop cut its emptying off) goes beside the first calls
  // too: a million files take minutes, which a start must not wait for.
  calls_->RunDaemonWork([this] {
    try {
      registry_->EmptyTrash();
    } catch (const std::exception& e) {
      spdlog::warn("cannot empty the trash: {}", e.what());
    }
  });
}

int Service::Run() {
  umask(077);
  // A configuration that does not parse stops the start: a typo in a setting that hides
  // secrets must not go unnoticed.
  config_ = LoadConfig(options_.config_path);
  // The option is one more assignment after the files, checked as theirs are.
  if (!options_.storage_cap.empty()) ApplyConfigText("[Storage]\nCap=" + options_.storage_cap + "\n", "--storage-cap", config_);
  output_budget_ = std::make_shared<OutputBudget>(config_.limits.max_captured_output_per_user);
  calls_ = std::make_unique<CallGate>(config_.limits.max_calls_in_flight_per_user);
  SetUpDirectories();
  ResolveStorageShares();
  // Spools on the state's disk, not the run dir's memory (output_relay.h).
  calls_->StartRelay(layout_.state_dir(), static_cast<int64_t>(config_.limits.stalled_reader_timeout_sec) * 1000, kMaxUnreadOutput);
  OpenState();
  RecoverSandboxes();
  PrepareJobs();
  Publish();
  StartBackgroundWork();
  for (;;) {
    loop_.Run(*connection_);
    if (stop_requested_ || !idle_exit_requested_) break;
    if (LeaveWhenStillIdle(idle_decided_at_call_)) {
      spdlog::info("idle for {} s: exiting (the next call starts sandboxd again)", options_.idle_exit_seconds);
      break;
    }
  }
  heartbeat_.Stop();
  sd_notify(0, "STOPPING=1");
  spdlog::info("sandboxd stopping");
  return 0;
}

Activity Service::CurrentActivity() {
  Activity activity;
  for (const auto& sandbox : registry_->List(0)) activity.running_jobs += sandbox->gate().jobs_in_progress();
  activity.operations = calls_ ? calls_->Busy() : 0;
  activity.last_call_usec = LastCallUsec();
  return activity;
}

void Service::Heartbeat() {
  try {
    Activity activity = CurrentActivity();
    std::string status = StatusLine(registry_->size(), activity.running_jobs);
    std::string message;
    if (status != last_status_) message = "STATUS=" + status + "\n";
    last_status_ = status;
    // Only a loop that answers is alive: a thread that ticks proves nothing.
    if (loop_probe_ && loop_probe_->Answers(std::chrono::milliseconds(watchdog_usec_ / 4000)))
      message += "WATCHDOG=1\n";
    if (!message.empty()) sd_notify(0, message.c_str());
    int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    if (!idle_exit_requested_ && IdleLongEnough(activity, now, options_.idle_exit_seconds)) {
      idle_decided_at_call_ = activity.last_call_usec;
      idle_exit_requested_ = true;
      loop_.Leave();
    }
  } catch (const std::exception& e) {
    spdlog::warn("heartbeat: {}", e.what());
  }
}

bool Service::LeaveWhenStillIdle(int64_t idle_since_call) {
  // The name goes first: from now on a call starts a new daemon through activation (which
  // waits for this one's state lock) instead of reaching one on its way out.
  connection_->releaseName(api::kBusName);
  // What the bus routed to us before the name went is still answered.
  while (connection_->processPendingRequest()) {
  }
  if (LastCallUsec() == idle_since_call && CurrentActivity().operations == 0) return true;
  spdlog::info("a call came while going idle: staying");
  connection_->requestName(api::kBusName);
  idle_exit_requested_ = false;
  return false;
}

void Service::Stop() {
  stop_requested_ = true;
  loop_.Leave();
}

}  // namespace sandboxd
