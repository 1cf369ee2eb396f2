#include "bus/sandbox_dbus.h"
#include "bus/bus_peers.h"
#include "bus/call_gate.h"
#include "bus/caller_watch.h"
#include "bus/object_table.h"
#include "bus/polkit.h"
#include "changes/live_conflicts.h"
#include "commit/commit_journal.h"
#include "commit/commit_runner.h"
#include "config/daemon_config.h"
#include "config/daemon_options.h"
#include "jobs/captured_output.h"
#include "jobs/job_limits.h"
#include "lifecycle/sandbox_removal.h"
#include "lifecycle/suspension.h"
#include "sandbox/layout.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox_registry.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <spdlog/spdlog.h>

#include "api.h"
#include "base/background_priority.h"
#include "base/fs_util.h"
#include "base/stalled_writer.h"
#include "bus/dbus_util.h"
#include "bus/job_dbus.h"
#include "bus/job_options.h"
#include "bus/owner_signal.h"
#include "bus/sandbox_access.h"
#include "changes/change_listing.h"
#include "changes/change_selection.h"
#include "changes/rename_finder.h"
#include "jobs/bus_sockets.h"
#include "jobs/bwrap_args.h"
#include "jobs/hidden_paths.h"
#include "jobs/job_setup.h"
#include "object_paths.h"
#include "owner/helper_client.h"
#include "review/diff_pages.h"
#include "sandbox/usage.h"
#include "selector.h"
#include "units.h"
#include "utf8.h"

namespace sandboxd {
namespace {

constexpr size_t kMaxArgs = 9000;      // as bubblewrap's MAX_ARGS, in spirit
constexpr size_t kMaxEnv = 4096;

std::string JoinRoots(const std::vector<std::string>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : " ") + root;
  return text;
}

/// Refuses an output fd that is missing or not open for writing, naming `what` it was for.
void CheckWritable(const UniqueFd& out, const std::string& what) {
  if (!out) throw Error(Code::kInvalidArgument, "no output fd given for the " + what);
  int out_flags = fcntl(out.get(), F_GETFL);
  if (out_flags < 0 || (out_flags & O_ACCMODE) == O_RDONLY)
    throw Error(Code::kInvalidArgument, "the " + what + " output fd is not open for writing");
}

/// Selectors name paths by their wire names (utf8.h); from here on they hold the names' bytes.
std::vector<std::string> SelectorsFromWire(std::vector<std::string> selectors) {
  for (auto& selector : selectors) selector = api::SelectorFromWire(selector);
  return selectors;
}

/// GetChanges answers in one message: at most this many changes, and (bounded from above
/// while building) at most this many bytes, well under the bus's 32 MiB message limit past which
/// dbus-daemon drops the daemon's connection. Why a count too: sdbus-c++ 1.2 builds each
/// variant as a message of its own (~1 KiB each), so a reply's build costs ~7 KiB per change.
/// ListChanges has no such limits: it writes into an fd.
constexpr size_t kMaxChangesInOneReply = 10000;
constexpr size_t kMaxReplyBytes = 30u << 20;
/// Commit's reply names at most this many skipped entries (of at most 8 KiB each).
constexpr size_t kMaxSkippedLines = 1000;
/// A diff goes to the helper this many changes at a time (diff_pages.h).
constexpr size_t kDiffPage = 4096;

sdbus::Variant VariantOf(const nlohmann::json& value) {
  if (value.is_string()) return sdbus::Variant(value.get<std::string>());
  if (value.is_boolean()) return sdbus::Variant(value.get<bool>());
  if (value.is_array()) return sdbus::Variant(value.get<std::vector<uint32_t>>());
  return sdbus::Variant(value.get<uint32_t>());
}

/// The refusal of a change list too large for one message, naming the way that has no limit.
Error TooLargeForOneReply(const std::string& sandbox_id, size_t changes, const std::string& limit) {
  return Error(Code::kTooLarge, "sandbox " + sandbox_id + " has " + std::to_string(changes) +
                                    " changes, more than one GetChanges reply holds (" + limit +
                                    "); read them with ListChanges, which writes them into an fd");
}

}  // namespace

SandboxDBus::SandboxDBus(const SandboxFaceParts& parts, sdbus::IConnection& connection, std::shared_ptr<Sandbox> sandbox)
    : AdaptorInterfaces(connection, api::SandboxPath(sandbox->id())), parts_(parts), sandbox_(std::move(sandbox)) {
  registerAdaptor();
}

SandboxDBus::~SandboxDBus() { unregisterAdaptor(); }

template <typename... Outs>
std::shared_ptr<SandboxDBus> SandboxDBus::KeepAlive(sdbus::Result<Outs...>& result) {
  // The worker holds this object for as long as it runs: the object table may drop it
  // meanwhile (a destroy that ended first), and `this` must outlive the work.
  auto self = weak_from_this().lock();
  if (!self) {
    try {
      throw Error(Code::kNotFound, "sandbox " + sandbox_->id() + " has been destroyed");
    } catch (...) {
      ReturnCurrentError(result);
    }
  }
  return self;
}

void SandboxDBus::Authorize(const Caller& caller, const std::string& verb, bool allow_interactive) {
  ActTarget target{sandbox_->id(), sandbox_->owner(), sandbox_->roots(), "sandbox " + sandbox_->id()};
  Access access = AuthorizeAct(parts_.authority, caller, target, verb, allow_interactive);
  // Known only after authorization: a destroyed sandbox is no one else's business either.
  if (sandbox_->destroyed()) throw Error(Code::kNotFound, "sandbox " + sandbox_->id() + " has been destroyed");
  if (access == Access::kManager)
    LogAbout(Subject(), spdlog::level::info, "sandbox {} of uid {}: {} by uid {} (polkit action {})", sandbox_->id(),
             sandbox_->owner(), verb, caller.uid, api::kActionManage);
}

template <typename... Outs, typename Body>
void SandboxDBus::InWorker(sdbus::Result<Outs...>&& result, const char* verb, bool allow_interactive, Body&& body) {
  // On the bus thread, while the message is there: who is calling (callers inside jobs are
  // refused here). Whether they may is asked in the worker: polkit can take minutes.
  Caller caller;
  if (!TakeCaller(getObject(), result, caller)) return;
  auto self = KeepAlive(result);
  if (!self || !parts_.calls.Admit(caller, result)) return;
  parts_.calls.RunForCaller(caller.uid, [this, self, result = std::move(result), body = std::forward<Body>(body), caller, verb,
                                         allow_interactive]() mutable {
    ReplyWith(result, [&] {
      Authorize(caller, verb, allow_interactive);
      return body(caller);
    });
  });
}

void SandboxDBus::EmptyTrashLater() {
  auto parts = parts_;
  parts_.calls.RunDaemonWork([parts] {
    try {
      parts.registry.EmptyTrash();
    } catch (const std::exception& e) {
      spdlog::warn("cannot empty the trash: {}", e.what());
    }
  });
}

void SandboxDBus::RemountUnlessBroken(const char* failed) {
  // A commit or undo that could not be taken back leaves the sandbox unmounted and frozen until
  // a restart settles it from the journal; a job must never run over half a commit.
  if (sandbox_->broken()) return;
  try {
    sandbox_->SetUp();
  } catch (const std::exception& e) {
    LogAbout(Subject(), spdlog::level::err, "sandbox {}: cannot remount after a failed {}: {}", sandbox_->id(), failed, e.what());
  }
}

Conflicts SandboxDBus::CurrentConflicts(const std::vector<ReviewedChange>& reviewed) {
  // Sights of a job that just ended may still be on their way (Run).
  sandbox_->WaitSettled("read the conflicts of");
  std::vector<RootChanges> changes;
  for (const auto& item : reviewed) {
    if (changes.empty() || changes.back().root != item.root) changes.push_back({item.root, {}});
    changes.back().changes.push_back(item.change);
  }
  return FindConflicts(*sandbox_, changes, parts_.sights.Load(sandbox_->id()), parts_.commits.AgreedUsec(*sandbox_),
                       parts_.options.helper_path, LookupUser(sandbox_->owner()));
}

void SandboxDBus::SettleDecisionsQuietly(const InodesByRoot& worked) {
  try {
    parts_.review.SettleAwaitedCommits(*sandbox_, parts_.journal);
    parts_.review.PinAfterMoves(*sandbox_, worked);
  } catch (const std::exception& e) {
    // Left pinned, they are pinned again at the next start (Service), or lapse: never wrong.
    LogAbout(Subject(), spdlog::level::warn, "sandbox {}: cannot pin its decisions after the commit: {}", sandbox_->id(), e.what());
  }
}

void SandboxDBus::AnnounceChangeSet(std::optional<size_t> counted) {
  uint32_t count = 0;
  try {
    count = static_cast<uint32_t>(counted ? *counted : sandbox_->CountChanges());
  } catch (const std::exception& e) {
    LogAbout(Subject(), spdlog::level::warn, "sandbox {}: cannot count changes: {}", sandbox_->id(), e.what());
  }
  // Not emitChangeSetChanged: that broadcasts to every connection on the bus.
  EmitToOwner(getObject(), parts_.peers, sandbox_->owner(), INTERFACE_NAME, "ChangeSetChanged", count);
}

void SandboxDBus::Run(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> argv, std::string cwd,
                      std::map<std::string, std::string> env, std::map<std::string, sdbus::UnixFd> fds,
                      std::map<std::string, sdbus::Variant> options, uint64_t flags) {
  bool interactive = flags & api::kFlagAllowInteractive;
  InWorker(std::move(result), "run", interactive, [this, argv = std::move(argv), cwd = std::move(cwd),
                               env = std::move(env), fds = std::move(fds), options = std::move(options), flags](const Caller& caller) mutable -> sdbus::ObjectPath {
    CheckFlags(flags, api::kFlagAllowInteractive);
    if (argv.empty()) throw Error(Code::kInvalidArgument, "no command given to run in sandbox " + sandbox_->id());
    if (argv.size() > kMaxArgs) throw Error(Code::kInvalidArgument, "too many arguments (more than " + std::to_string(kMaxArgs) + ")");
    if (env.size() > kMaxEnv) throw Error(Code::kInvalidArgument, "too many environment variables (more than " + std::to_string(kMaxEnv) + ")");
    JobOptions job_options = ParseJobOptions(options, sandbox_->id());
    for (const auto& [key, fd] : fds)
      if (key != "stdin" && key != "stdout" && key != "stderr")
        throw Error(Code::kInvalidArgument, "unknown stream '" + key + "' (expected stdin, stdout or stderr)");
    std::string job_cwd = ResolveJobCwd(cwd, sandbox_->roots(), sandbox_->id(), job_options.cwd_fallback);
    UserCredentials user = LookupUser(sandbox_->owner());
    // A sandbox created with the network had polkit's answer then; a job asking for it in
    // another sandbox asks now.
    if (job_options.network && !sandbox_->network())
      parts_.authority.Check(caller, api::kActionNetwork,
                                 {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())},
                                  {"command", argv.front()}, {"verb", "run"}},
                                 flags & api::kFlagAllowInteractive,
                                 "run " + argv.front() + " with network access in sandbox " + sandbox_->id());
    const JobLimits default_limits{parts_.config.limits.default_memory_max, parts_.config.limits.default_tasks_max};
    if (std::string above = AboveDefaults(job_options.limits, default_limits); !above.empty())
      parts_.authority.Check(caller, api::kActionManage,
                                 {{"sandbox", sandbox_->id()}, {"command", argv.front()}, {"verb", "run"}, {"limits", above}},
                                 flags & api::kFlagAllowInteractive, "run " + argv.front() + " in sandbox " + sandbox_->id() + " with " + above);
    job_options.limits =
        WithDefaults(job_options.limits, default_limits, parts_.job_limits.memory(), parts_.job_limits.tasks());

    JobLaunch launch;
    launch.user = user;
    auto take = [&fds](const char* name) {
      auto it = fds.find(name);
      return it == fds.end() ? UniqueFd() : UniqueFd(it->second.release());
    };
    launch.stdin_fd = take("stdin");
    launch.stdout_fd = take("stdout");
    launch.stderr_fd = take("stderr");
    launch.timeout = std::chrono::seconds(job_options.timeout_sec);
    // A client that hands over its own streams is there for the job's whole life (a
    // terminal, a pipe it reads): when it goes, the job goes. Captured output is for clients
    // that come back later, so such a job runs on.
    bool attached = launch.stdin_fd || launch.stdout_fd || launch.stderr_fd;
    BwrapConfig config;
    config.bwrap = parts_.options.bwrap_path;
    // In user mode the overlay is mounted over the root's own path in the job's namespaces
    // (user_overlay_main.cpp), so the root is bound to itself.
    bool user_mode = parts_.options.user_mode;
    for (size_t i = 0; i < sandbox_->roots().size(); ++i)
      config.roots.push_back({user_mode ? sandbox_->roots()[i] : sandbox_->MergedDir(i), sandbox_->roots()[i]});
    config.cwd = job_cwd;
    config.network = job_options.network || sandbox_->network();
    config.json_status_fd = Job::kStatusFd;
    config.args_fd = Job::kArgsFd;
    config.block_fd = Job::kBlockFd;
    config.env = JobEnvironment(user, env);
    config.command = argv;
    HiddenPathsRequest hiding;
    hiding.sandbox_id = sandbox_->id();
    hiding.owner_uid = user.uid;
    hiding.owner_home = user.home;
    hiding.roots = config.roots;
    hiding.configured = parts_.config.jobs.hidden_paths;
    hiding.hide_other_homes = parts_.config.jobs.hide_other_homes;
    // The sandbox's own (create --hide), then the job's (run --hide): both must hold no root.
    hiding.explicit_paths = sandbox_->hide();
    hiding.explicit_paths.insert(hiding.explicit_paths.end(), job_options.hide.begin(), job_options.hide.end());
    // Every sandbox's merged views (this owner's others included) are under the run dir.
    hiding.always = {parts_.layout.run_dir()};
    // And the bus: a job must never drive sandboxd (the daemon also refuses its calls).
    for (const auto& path : BusPathsHiddenFromJobs(user_mode)) hiding.always.push_back(path);
    // In user mode the state directory is the user's, so a job could read it: every other
    // sandbox's pending changes and the database. System mode keeps it root's (0700).
    if (user_mode) hiding.always.push_back(parts_.layout.state_dir());
    hiding.home_parents = DefaultHomeParents(user.home);
    hiding.owner_identity = user;
    config.hiding = HiddenPathsBwrapArgs(ResolveHiddenPaths(hiding), parts_.hidden_file_stand_in);
    if (job_options.tty) {
      if (!launch.stdin_fd || !isatty(launch.stdin_fd.get()))
        throw Error(Code::kInvalidArgument, "option 'tty' for a job in sandbox " + sandbox_->id() + " needs a terminal as its stdin");
      config.command.insert(config.command.begin(), BesideHelper(parts_.options.helper_path, "sandboxd-job-tty"));
    }
    BwrapInvocation bwrap = BuildBwrapArgs(config);
    launch.argv = std::move(bwrap.argv);
    launch.args_data = BwrapArgsData(bwrap.options);
    if (user_mode) {
      std::vector<std::string> prefix = {BesideHelper(parts_.options.helper_path, "sandboxd-user-overlay")};
      for (size_t i = 0; i < sandbox_->roots().size(); ++i)
        prefix.insert(prefix.end(), {"--overlay", sandbox_->roots()[i], sandbox_->UpperDir(i), sandbox_->WorkDir(i)});
      prefix.push_back("--");
      launch.argv.insert(launch.argv.begin(), prefix.begin(), prefix.end());
    }

    // One of the owner's job slots, held until the job ends (its end callback gives it back);
    // given back here if the job does not start.
    const uid_t owner = sandbox_->owner();
    const size_t most_jobs = parts_.config.limits.max_running_jobs_per_user;
    if (owner != 0 && !parts_.job_slots.TryTake(owner, most_jobs))
      throw Error(Code::kQuotaExceeded, "uid " + std::to_string(owner) + " runs " + std::to_string(most_jobs) +
                                            " jobs already, the most [Limits] MaxRunningJobsPerUser=" + std::to_string(most_jobs) +
                                            " allows; wait for one to end");
    bool slot_with_job = owner == 0;  // root's jobs hold none
    struct SlotGuard {
      UserSlots& slots;
      uid_t uid;
      const bool& passed;
      ~SlotGuard() {
        if (!passed) slots.Give(uid);
      }
    } slot_guard{parts_.job_slots, owner, slot_with_job};

    std::string job_id = RandomId();
    if (!launch.stdout_fd || !launch.stderr_fd)
      launch.output = std::make_unique<CapturedOutput>(parts_.layout.OutputDir(), job_id, owner, parts_.output_budget, Job::kOutputCap);
    // A hard quota is the disk's business: a write past it fails in the job, and a job that
    // deletes must still start in a full sandbox. Else the quota is watched while jobs run.
    if (sandbox_->quota_bytes() != 0 && !sandbox_->hard_quota()) {
      // Over its quota (a job stopped for it, or a quota the changes outgrew): nothing more may
      // be written until changes are committed or discarded.
      uint64_t used = ChangesBytes(*sandbox_);
      if (used >= sandbox_->quota_bytes())
        throw Error(Code::kQuotaExceeded, "sandbox " + sandbox_->id() + " holds " + units::HumanBytes(used) + " of changes, over its quota of " +
                                              units::HumanBytes(sandbox_->quota_bytes()) + "; commit or discard changes before running more jobs");
      launch.over_quota = [sandbox = std::weak_ptr<Sandbox>(sandbox_), quota = sandbox_->quota_bytes()] {
        auto alive = sandbox.lock();
        return alive && ChangesBytes(*alive) > quota;
      };
    }
    if (parts_.job_cgroups) launch.cgroup = std::make_unique<JobCgroup>(*parts_.job_cgroups, "job-" + job_id);
    if (job_options.limits.any())
      launch.limits = parts_.job_limits.Apply("job-" + job_id, job_options.limits, launch.cgroup ? launch.cgroup->path() : "");
    int64_t started = sandbox_->BeginJob();
    auto job = std::make_shared<Job>(job_id, sandbox_->id(), argv);
    std::shared_ptr<JobDBus> job_object;
    try {
      job_object = parts_.objects.PublishJob(job, sandbox_);
      std::weak_ptr<JobDBus> weak_job = job_object;
      std::weak_ptr<SandboxDBus> weak_self = parts_.objects.FindSandbox(sandbox_->id());
      std::string sandbox_id = sandbox_->id();
      auto parts = parts_;
      auto sandbox = sandbox_;
      // The end callback runs on the job's own monitor thread, which the job outlives: a plain
      // pointer (a shared one would keep the job alive from its own thread).
      Job* monitored = job.get();
      job->Start(std::move(launch), [weak_job, weak_self, sandbox, parts, sandbox_id, job_id, started, owner, monitored](const JobEnd& end) {
        int64_t unseen_from = sandbox->EndJob(started, /*settle=*/true);
        // Ends this job's settling if it is never queued (the work below fails before); once
        // queued, the settling's passes end it.
        auto queued = std::make_shared<bool>(false);
        auto settled = std::shared_ptr<void>(nullptr, [sandbox, queued](void*) {
          if (!*queued) sandbox->SettleDone();
        });
        if (owner != 0) parts.job_slots.Give(owner);
        LogAbout({sandbox_id, sandbox->owner(), job_id}, spdlog::level::info, "job {} in sandbox {} ended: {} {}", job_id, sandbox_id,
                 ToString(end.reason), end.exit_status);
        if (auto j = weak_job.lock()) j->AnnounceFinished(end);
        // The caller hears the end at once (Job.Wait is answered when this returns); what the
        // job changed is taken in after that, off its time: its cost grows with the change
        // set. Until then the sandbox is settling: a commit, and anyone reading conflicts,
        // waits for it (Sandbox::WaitSettled). On the job's own thread, not a worker: calls
        // waiting for the settling could otherwise fill every worker and wait for ever.
        monitored->ThenAfterWaiters([weak_self, sandbox, parts, sandbox_id, job_id, unseen_from, queued,
                                     settled = std::move(settled)]() mutable {
          *queued = true;
          settled.reset();
          if (!sandbox->QueueSettle(unseen_from)) return;  // the settling under way takes it in
          BackgroundPriority background;  // nobody's call waits for it, unless it reads conflicts
          while (auto pass = sandbox->NextSettlePass()) {
            // What the jobs saw of the live tree, recorded before anything compares with it (a
            // commit right after a job: live_sight.h). A live change from the earliest start
            // on is unseen, so taking it in later only ever finds more unseen changes, never
            // fewer. One scan serves both the sights and the count the owner is told (a scan
            // also links up hard links: hard_links.h).
            std::optional<size_t> changes;
            try {
              sandbox->ForgetIndexWhiteouts();
              // As a stream: a job may have made a million changes.
              // A listing reads its conflicts a page at a time behind this pass (StreamedConflicts).
              SightRecorder sights(parts.sights, *sandbox, pass->unseen_from_ns, parts.commits.AgreedUsec(*sandbox) * 1000,
                                   sandbox->SightedBeforeNs(), [&](const RecordKey& through) { sandbox->SettledThrough(through); });
              size_t counted = 0;
              for (size_t i = 0; i < sandbox->roots().size(); ++i) {
                sandbox->PrepareStream(i);
                sandbox->StreamChangesTimed(i, [&](Change&& change, const UpperEntry& upper) {
                  ++counted;
                  sights.Add(i, change, upper.ctime_ns);
                });
              }
              sights.Finish();
              sandbox->SightsRecordedBefore(pass->unseen_from_ns);
              changes = counted;
            } catch (const std::exception& e) {
              LogAbout({sandbox_id, sandbox->owner(), job_id}, spdlog::level::warn,
                       "sandbox {}: cannot record what its jobs saw of the live tree: {}", sandbox_id, e.what());
            }
            sandbox->SettlePassDone(*pass);  // settled before the owner hears of it
            if (auto s = weak_self.lock()) s->AnnounceChangeSet(changes);
            malloc_trim(0);  // the scan's memory goes back to the system, as after a worker's calls
          }
        });
        parts.objects.PruneJobs(sandbox_id, job_id);
      }, [weak_job](uint64_t captured_bytes) {
        if (auto j = weak_job.lock()) j->AnnounceOutput(captured_bytes);
      });
      slot_with_job = true;  // the job gives it back when it ends
      if (attached) parts_.callers.Track(caller.sender, job);
    } catch (...) {
      sandbox_->EndJob(started);
      throw;
    }
    LogAbout({sandbox_->id(), sandbox_->owner(), job->id()}, spdlog::level::info, "job {} started in sandbox {} by uid {}: {}", job->id(),
             sandbox_->id(), caller.uid, argv.front());
    return sdbus::ObjectPath(api::JobPath(job->id()));
  });
}

void SandboxDBus::GetChanges(sdbus::Result<std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>>>&& result) {
  InWorker(std::move(result), "get-changes", false, [this](const Caller&) mutable {
    sandbox_->CheckActive("read the changes of");
    std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>> list;
    auto reviewed = parts_.review.Current(*sandbox_);
    if (reviewed.size() > kMaxChangesInOneReply)
      throw TooLargeForOneReply(sandbox_->id(), reviewed.size(), std::to_string(kMaxChangesInOneReply) + " changes");
    // Conflicts are marked before a commit is tried: "conflict" true and "conflict_reason".
    Conflicts conflicts = CurrentConflicts(reviewed);
    size_t bytes = 0;
    for (const auto& item : reviewed) {
      auto conflict = conflicts.find({item.root, item.change.path});
      nlohmann::json listed = ListedChange(item, sandbox_->PathPrefix(item.root), conflict == conflicts.end() ? nullptr : &conflict->second);
      bytes += MarshalledBound(listed);
      if (bytes > kMaxReplyBytes) throw TooLargeForOneReply(sandbox_->id(), reviewed.size(), units::HumanBytes(kMaxReplyBytes) + " of names and details");
      std::map<std::string, sdbus::Variant> details;
      for (const auto& [key, value] : listed.items())
        if (key != "root" && key != "path" && key != "kind") details.emplace(key, VariantOf(value));
      list.emplace_back(listed["root"].get<uint32_t>(), listed["path"].get<std::string>(), listed["kind"].get<std::string>(), std::move(details));
    }
    return list;
  });
}

void SandboxDBus::ListChanges(sdbus::Result<uint32_t>&& result, sdbus::UnixFd output) {
  InWorker(std::move(result), "list-changes", false, [this, out = UniqueFd(output.release())](const Caller&) mutable -> uint32_t {
    CheckWritable(out, "change list");
    sandbox_->CheckActive("read the changes of");
    // The change set is never held whole (it may be a million changes long): it is read as a
    // stream, a page at a time gets its conflicts, and its lines go out as they are made. Right
    // after a job, each page follows the job's settling as it stores the page's sights: the
    // listing and the settling scan side by side rather than one after the other.
    StreamedConflicts conflicts(*sandbox_, parts_.sights, parts_.commits.AgreedUsec(*sandbox_), parts_.options.helper_path,
                                LookupUser(sandbox_->owner()));
    // A reader that stops reading ends the call after [Limits] StalledReaderTimeout=.
    const int64_t stall_ms = static_cast<int64_t>(parts_.config.limits.stalled_reader_timeout_sec) * 1000;
    const std::string what = "the change list of sandbox " + sandbox_->id();
    std::string lines;
    auto flush = [&] {
      if (!WriteWithin(out.get(), lines, stall_ms, what))
        throw Error(Code::kFailed, "the reader of " + what + " went away");
      lines.clear();
    };
    constexpr size_t kPage = 4096;
    std::vector<ReviewedChange> page;
    uint32_t listed = 0;
    auto list_page = [&] {
      if (page.empty()) return;
      std::vector<RootChanges> changes;
      for (const auto& item : page) {
        if (changes.empty() || changes.back().root != item.root) changes.push_back({item.root, {}});
        changes.back().changes.push_back(item.change);
      }
      Conflicts found = conflicts.Of(changes);
      for (const auto& item : page) {
        auto conflict = found.find({item.root, item.change.path});
        AppendListedLine(lines, item, sandbox_->PathPrefix(item.root), conflict == found.end() ? nullptr : &conflict->second);
        if (lines.size() >= 64 * 1024) flush();
      }
      listed += static_cast<uint32_t>(page.size());
      page.clear();
    };
    parts_.review.ForEach(*sandbox_, [&](ReviewedChange&& item) {
      page.push_back(std::move(item));
      if (page.size() >= kPage) list_page();
    });
    list_page();
    flush();
    // And the settling's own end (a change set emptied by the job has no page to wait on): a
    // listing is how a script waits until the last job's end is taken in.
    sandbox_->WaitSettled("read the conflicts of");
    return listed;
  });
}

void SandboxDBus::Diff(sdbus::Result<>&& result, std::vector<std::string> selectors, sdbus::UnixFd output) {
  InWorker(std::move(result), "diff", false, [this, selectors = SelectorsFromWire(std::move(selectors)),
                               out = UniqueFd(output.release())](const Caller&) mutable {
    CheckWritable(out, "diff");
    sandbox_->CheckActive("diff");
    // The change set is never held whole: a page of it at a time goes to the helper, which
    // makes the diff as the owner: it reads the live tree and the upper with the owner's rights,
    // so a diff can never show what the owner could not read.
    // A reader that stops reading (a pipe nobody reads) would hold this worker and the helper
    // for ever: after [Limits] StalledReaderTimeout= without progress the helper gives up.
    UserCredentials owner = LookupUser(sandbox_->owner());
    const int64_t stall_ms = static_cast<int64_t>(parts_.config.limits.stalled_reader_timeout_sec) * 1000;
    std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;  // live, upper
    ForEachDiffPage(parts_.review, *sandbox_, selectors, kDiffPage, [&](const DiffPage& page) {
      auto& [live, upper] = roots[page.root];
      if (!live) live = sandbox_->OpenLiveRoot(page.root), upper = sandbox_->OpenUpper(page.root);
      try {
        RunHelper(parts_.options.helper_path, HelperOp::kDiff, owner,
                  {{live.get(), upper.get(), sandbox_->PathPrefix(page.root), page.changes, page.renames, page.only_hunks}}, out.get(),
                  stall_ms);
      } catch (const Error& e) {
        throw Error(e.code(), "the diff of sandbox " + sandbox_->id() + " stopped: " + e.what());
      }
      return !ReaderWentAway(out.get());
    });
  });
}

void SandboxDBus::Approve(sdbus::Result<uint32_t>&& result, std::vector<std::string> selectors, uint64_t flags) {
  Decide(std::move(result), std::move(selectors), flags, Verdict::kApproved);
}

void SandboxDBus::Reject(sdbus::Result<uint32_t>&& result, std::vector<std::string> selectors, uint64_t flags) {
  Decide(std::move(result), std::move(selectors), flags, Verdict::kRejected);
}

void SandboxDBus::Decide(sdbus::Result<uint32_t>&& result, std::vector<std::string> selectors, uint64_t flags, Verdict verdict) {
  // Approve and Reject ask no one of their owner, and take no "interactive" bit.
  InWorker(std::move(result), verdict == Verdict::kApproved ? "approve" : "reject", false,
           [this, selectors = SelectorsFromWire(std::move(selectors)), flags, verdict](const Caller&) mutable -> uint32_t {
    CheckFlags(flags, api::kFlagEveryChange);
    sandbox_->CheckActive(verdict == Verdict::kApproved ? "approve changes in" : "reject changes in");
    // Hunks are counted by the helper as the owner: it reads both sides of each file.
    auto count_hunks = [this](const std::vector<RootChanges>& asked) {
      std::vector<UniqueFd> fds;
      std::vector<HelperRoot> roots;
      for (const auto& root : asked) {
        fds.push_back(sandbox_->OpenLiveRoot(root.root));
        fds.push_back(sandbox_->OpenUpper(root.root));
        roots.push_back({fds[fds.size() - 2].get(), fds.back().get(), sandbox_->PathPrefix(root.root), root.changes, {}, {}});
      }
      auto counted = CountHunksAsOwner(parts_.options.helper_path, LookupUser(sandbox_->owner()), roots);
      HunkCounts counts;
      for (size_t i = 0; i < asked.size() && i < counted.size(); ++i)
        for (const auto& [path, count] : counted[i]) counts[{asked[i].root, path}] = count;
      return counts;
    };
    size_t decided = parts_.review.Decide(*sandbox_, selectors, flags & api::kFlagEveryChange, verdict, count_hunks);
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: {} {} changes or hunks", sandbox_->id(), ToString(verdict), decided);
    AnnounceChangeSet();
    return static_cast<uint32_t>(decided);
  });
}

void SandboxDBus::Commit(sdbus::Result<uint32_t, std::vector<std::string>>&& result, std::vector<std::string> selectors,
                         uint64_t flags) {
  InWorker(std::move(result), "commit", flags & api::kFlagAllowInteractive,
           [this, selectors = SelectorsFromWire(std::move(selectors)), flags](const Caller& caller) mutable -> std::tuple<uint32_t, std::vector<std::string>> {
    CheckFlags(flags, api::kFlagAllowInteractive | api::kFlagCommitAll | api::kFlagForce);
    // Held from before the question to polkit (or a person) until the end, and unmounted before
    // anything moves: the merged view and jobs are the only ways into the upper, so from here
    // on nothing but this commit changes it. The decisions are read once, of exactly what is
    // there, and the question names what the commit will take.
    ExclusiveOperation exclusive(*sandbox_, "commit");
    std::future<void> unmounted = sandbox_->UnmountBeside();
    CommitRequest request;
    int64_t commit = 0;
    try {
      // One pass learns what the question names and whether the commit takes the whole change
      // set, which then streams from the upper; a part streams from the review as the commit
      // stages it. Neither is ever held whole: a change set may be a million. It reads the
      // layers while the overlays are torn down beside it.
      CommitOutlook outlook = parts_.review.Outlook(*sandbox_, selectors, flags & api::kFlagCommitAll);
      unmounted.get();
      if (outlook.changes > 0) {
        parts_.authority.Check(caller, api::kActionCommit,
                                   {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())},
                                    {"changes", std::to_string(outlook.changes)}, {"verb", "commit"}},
                                   flags & api::kFlagAllowInteractive,
                                   "commit sandbox " + sandbox_->id() + " into " + JoinRoots(sandbox_->roots()));
        if (outlook.everything && !outlook.uncommittable && CommitRunner::TakesWholeUpper(*sandbox_)) {
          request.whole_upper = true;
          request.renames = std::move(outlook.renames);
        } else if (outlook.taken > 0) {
          request.taken = [this, &selectors, all = (flags & api::kFlagCommitAll) != 0, &commit](const auto& take) {
            return parts_.review.StreamTaken(*sandbox_, selectors, all, commit, take);
          };
        }
        request.force = flags & api::kFlagForce;
      }
    } catch (...) {
      if (unmounted.valid()) unmounted.wait();
      RemountUnlessBroken("commit");
      throw;
    }
    // Nothing to commit touches nothing live (and asks no one about it).
    if (!request.taken && !request.whole_upper) {
      sandbox_->SetUp();
      return {0u, {}};
    }
    CommitRunner::Outcome outcome;
    // What the owner decided outlives the entries' moves to the stage and, if the commit is
    // refused, fails or is cut off, back (recovery pins them again after a kill).
    // The hunks a partly committed file keeps wait in the store for the commit's outcome.
    parts_.review.PinBeforeMoves(*sandbox_);
    try {
      // The files move in the helper with the owner's credentials: a commit can never write
      // where its owner could not.
      outcome = parts_.commits.Commit(*sandbox_, request, [&](int64_t journaled) { commit = journaled; });
      for (const auto& skipped : outcome.skipped) LogAbout(Subject(), spdlog::level::warn, "sandbox {}: {}", sandbox_->id(), skipped);
    } catch (...) {
      // The caller hears why; the log keeps it beside the journal's commit id, for an admin (and
      // a test that saw only an exit status).
      sdbus::Error why = CurrentExceptionAsDBusError();
      LogAbout(Subject(), spdlog::level::info, "sandbox {}: commit {} did not go live: {}: {}", sandbox_->id(), commit, why.getName(),
               why.getMessage());
      SettleDecisionsQuietly();
      RemountUnlessBroken("commit");
      AnnounceChangeSet();
      throw;
    }
    sandbox_->SetUp();
    try {
      parts_.review.AfterCommit(*sandbox_, commit, request.whole_upper, parts_.journal);
    } catch (const std::exception& e) {
      LogAbout(Subject(), spdlog::level::warn, "sandbox {}: cannot update its approvals after the commit: {}", sandbox_->id(), e.what());
    }
    SettleDecisionsQuietly(outcome.worked);
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: committed {} changes for uid {}", sandbox_->id(), outcome.committed, caller.uid);
    AnnounceChangeSet();
    // One line per skipped entry, up to a bound: a job can make a million sockets, and the
    // reply must fit a D-Bus message. The journal has every line.
    std::vector<std::string> skipped;
    for (const auto& line : outcome.skipped) {
      if (skipped.size() == kMaxSkippedLines) {
        skipped.push_back("... and " + std::to_string(outcome.skipped.size() - kMaxSkippedLines) +
                          " more entries skipped (the journal names each)");
        break;
      }
      skipped.push_back(api::CutToBytes(api::EscapeInvalidUtf8(line), 8192));
    }
    return {static_cast<uint32_t>(outcome.committed), skipped};
  });
}

void SandboxDBus::Undo(sdbus::Result<int64_t>&& result, uint64_t flags) {
  InWorker(std::move(result), "undo", flags & api::kFlagAllowInteractive, [this, flags](const Caller& caller) mutable -> int64_t {
    CheckFlags(flags, api::kFlagAllowInteractive);
    parts_.authority.Check(caller, api::kActionCommit,
                               {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())}, {"verb", "undo"}},
                               flags & api::kFlagAllowInteractive,
                               "undo the last commit of sandbox " + sandbox_->id() + " in " + JoinRoots(sandbox_->roots()));
    ExclusiveOperation exclusive(*sandbox_, "undo");
    sandbox_->Unmount();
    CommitRunner::UndoOutcome outcome;
    // Like a commit's, an undo's work moves the ctime of other names of the files it puts back:
    // the decisions about those names hold across it.
    parts_.review.PinBeforeMoves(*sandbox_);
    try {
      outcome = parts_.commits.Undo(*sandbox_);
    } catch (...) {
      SettleDecisionsQuietly();
      RemountUnlessBroken("undo");
      throw;
    }
    sandbox_->SetUp();
    SettleDecisionsQuietly(outcome.worked);
    for (const auto& note : outcome.notes) LogAbout(Subject(), spdlog::level::warn, "{}", note);
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: commit {} undone for uid {}", sandbox_->id(), outcome.commit, caller.uid);
    AnnounceChangeSet();
    return outcome.commit;
  });
}

void SandboxDBus::Discard(sdbus::Result<>&& result) {
  InWorker(std::move(result), "discard", false, [this](const Caller&) mutable {
    ExclusiveOperation exclusive(*sandbox_, "discard");
    sandbox_->Unmount(Sandbox::Layers::kDiscarded);
    try {
      sandbox_->TrashLayers();
      parts_.review.store().Clear(sandbox_->id());
      parts_.sights.Clear(sandbox_->id());  // nothing changed, nothing seen
      EmptyTrashLater();
    } catch (...) {
      sandbox_->SetUp();
      throw;
    }
    sandbox_->SetUp();
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: changes discarded", sandbox_->id());
    AnnounceChangeSet();
  });
}

void SandboxDBus::Suspend(sdbus::Result<uint64_t>&& result) {
  InWorker(std::move(result), "suspend", false, [this](const Caller& caller) mutable -> uint64_t {
    ExclusiveOperation exclusive(*sandbox_, "suspend");
    uint64_t bytes = parts_.suspension.Suspend(*sandbox_);
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: suspended for uid {} ({} bytes archived)", sandbox_->id(), caller.uid, bytes);
    EmptyTrashLater();
    return bytes;
  });
}

void SandboxDBus::Resume(sdbus::Result<>&& result) {
  InWorker(std::move(result), "resume", false, [this](const Caller& caller) mutable {
    ExclusiveOperation exclusive(*sandbox_, "resume");
    parts_.suspension.Resume(*sandbox_);
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: resumed for uid {}", sandbox_->id(), caller.uid);
    AnnounceChangeSet();
  });
}

void SandboxDBus::Destroy(sdbus::Result<>&& result) {
  Caller caller;
  if (!TakeCaller(getObject(), result, caller)) return;  // refuses callers inside jobs
  auto self = KeepAlive(result);
  if (!self || !parts_.calls.Admit(caller, result)) return;
  parts_.calls.RunForCaller(caller.uid, [this, self, caller, result = std::move(result)]() mutable {
    bool destroyed = false;
    ReplyWith(result, [&] {
      Authorize(caller, "destroy", false);
      ExclusiveOperation exclusive(*sandbox_, "destroy");
      // Once the record is gone the sandbox is gone, whatever happens next: a restart sweeps
      // up what is left (SweepOrphans).
      parts_.registry.Forget(sandbox_->id());
      sandbox_->MarkDestroyed();
      LogAbout(Subject(), spdlog::level::info, "sandbox {} destroyed by uid {}", sandbox_->id(), caller.uid);
      destroyed = true;
    });
    if (!destroyed) return;
    // After the reply, off the caller's time: drop the object (never from inside its own
    // handler), unmount (which syncs the upper's file system) and delete the files.
    parts_.removal.Remove(sandbox_);
  });
}

void SandboxDBus::GetInfo(sdbus::Result<std::map<std::string, sdbus::Variant>>&& result) {
  // Async (a worker) only because a caller who is not the owner is asked about through polkit.
  InWorker(std::move(result), "get-info", false, [this](const Caller&) {
    return std::map<std::string, sdbus::Variant>{
        {"id", sdbus::Variant(sandbox_->id())},
        {"name", sdbus::Variant(sandbox_->name())},
        {"owner", sdbus::Variant(static_cast<uint32_t>(sandbox_->owner()))},
        {"roots", sdbus::Variant(sandbox_->roots())},
        {"state", sdbus::Variant(std::string(ToString(sandbox_->state())))},
        {"created_usec", sdbus::Variant(static_cast<uint64_t>(sandbox_->created_usec()))},
        {"running_jobs", sdbus::Variant(sandbox_->running_jobs())},
        {"network", sdbus::Variant(sandbox_->network())},
        {"shared", sdbus::Variant(sandbox_->shared())},
        {"quota_bytes", sdbus::Variant(sandbox_->quota_bytes())},
        {"ttl_sec", sdbus::Variant(sandbox_->ttl_sec())},
        {"hide", sdbus::Variant(sandbox_->hide())},
        {"last_used_usec", sdbus::Variant(static_cast<uint64_t>(sandbox_->last_used_usec()))},
    };
  });
}

}  // namespace sandboxd
