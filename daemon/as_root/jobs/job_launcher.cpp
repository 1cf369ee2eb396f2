#include "jobs/job_launcher.h"

#include <unistd.h>

#include <atomic>
#include <spdlog/spdlog.h>

#include "base/errors.h"
#include "base/fs_util.h"
#include "jobs/bus_sockets.h"
#include "jobs/bwrap_args.h"
#include "jobs/hidden_paths.h"
#include "jobs/host_sockets.h"
#include "jobs/job_settling.h"
#include "jobs/job_setup.h"
#include "logging/log.h"
#include "helper_clients/helper_client.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox.h"
#include "sandbox/usage.h"
#include "units.h"

namespace sandboxd {
namespace {

/// One of an owner's running-job slots ([Limits] MaxRunningJobsPerUser=), given back once:
/// by the job's end, or by the launch that never started it. Root's jobs hold none.
class JobSlot {
 public:
  JobSlot(UserSlots& slots, uid_t owner, size_t most) : slots_(slots), owner_(owner) {
    if (owner_ != 0 && !slots_.TryTake(owner_, most))
      throw Error(Code::kQuotaExceeded, "uid " + std::to_string(owner_) + " runs " + std::to_string(most) +
                                            " jobs already, the most [Limits] MaxRunningJobsPerUser=" + std::to_string(most) +
                                            " allows; wait for one to end");
  }
  ~JobSlot() { GiveBack(); }
  JobSlot(const JobSlot&) = delete;
  JobSlot& operator=(const JobSlot&) = delete;
  void GiveBack() {
    if (owner_ != 0 && !given_.exchange(true)) slots_.Give(owner_);
  }

 private:
  UserSlots& slots_;
  const uid_t owner_;
  std::atomic<bool> given_{false};
};

}  // namespace

JobLauncher::JobLauncher(JobLauncherParts parts) : parts_(std::move(parts)) {}

JobConsent JobLauncher::ConsentNeeded(const Sandbox& sandbox, const JobRequest& request) const {
  // A bad working directory is refused before anyone is asked about the rest.
  ResolveJobCwd(request.cwd, sandbox.roots(), sandbox.id(), request.options.cwd_fallback);
  // A sandbox created with the network had polkit's answer then; a job asking for it in
  // another sandbox asks now.
  JobConsent consent{request.options.network && !sandbox.network(), "", AboveDefaults(request.options.limits, parts_.settings.default_limits)};
  const auto& hosts = request.options.allow_hosts;
  if (!hosts.empty()) {
    if (parts_.settings.user_mode)
      throw Error(Code::kInvalidArgument, "allowed hosts for a job in sandbox " + sandbox.id() +
                                              " need the system sandboxd: a user's own cannot set up a job's network (use the system one, or --network)");
    // Fewer hosts than the sandbox's whole network, or hosts its own list or the
    // administrator's covers, were granted already.
    if (!sandbox.network() && !network::Covers(sandbox.allow_hosts(), hosts) && !network::Covers(parts_.settings.admin_hosts, hosts))
      consent.hosts = network::FormatHostRules(hosts);
  }
  return consent;
}

std::vector<network::HostRule> JobLauncher::HostsOf(const Sandbox& sandbox, const JobOptions& options) {
  if (!options.allow_hosts.empty()) return options.allow_hosts;
  // A job given the whole network has no use for its sandbox's few hosts.
  return options.network ? std::vector<network::HostRule>{} : sandbox.allow_hosts();
}

JobLaunch JobLauncher::Assemble(const Sandbox& sandbox, JobRequest& request, const UserCredentials& user) const {
  const JobSettings& settings = parts_.settings;
  JobLaunch launch;
  launch.user = user;
  launch.stdin_fd = std::move(request.stdin_fd);
  launch.stdout_fd = std::move(request.stdout_fd);
  launch.stderr_fd = std::move(request.stderr_fd);
  launch.timeout = std::chrono::seconds(request.options.timeout_sec);
  BwrapConfig config;
  config.bwrap = settings.bwrap_path;
  // In user mode the overlay is mounted over the root's own path in the job's namespaces
  // (user_overlay_main.cpp), so the root is bound to itself.
  for (size_t i = 0; i < sandbox.roots().size(); ++i)
    config.roots.push_back({settings.user_mode ? sandbox.roots()[i] : sandbox.paths().MergedDir(i), sandbox.roots()[i]});
  // Its bwrap copies the namespace it starts in: one where the run dir's tree of overlays is
  // gone but for this sandbox's own (private_mounts.h). A copy of another sandbox's would keep
  // that sandbox's layers busy while the job runs, and its commit could not mount them again.
  if (!settings.user_mode) {
    launch.mounts = MountPruning{settings.run_dir, {}};
    for (size_t i = 0; i < sandbox.roots().size(); ++i) launch.mounts->kept.push_back(sandbox.paths().MergedDir(i));
    if (sandbox.scratch_home()) {
      // The owner's home, writable into the sandbox's scratch layer, at its canonical path.
      char* home = realpath(user.home.c_str(), nullptr);
      if (!home) ThrowErrno("cannot find the home " + user.home + " for the scratch home of sandbox " + sandbox.id());
      config.scratch_home = {sandbox.paths().ScratchHomeMerged(), home};
      free(home);
      launch.mounts->kept.push_back(sandbox.paths().ScratchHomeMerged());
    }
  }
  config.cwd = ResolveJobCwd(request.cwd, sandbox.roots(), sandbox.id(), request.options.cwd_fallback);
  // The job's own hosts narrow a sandbox's whole network to them.
  config.network = request.options.network || (sandbox.network() && request.options.allow_hosts.empty());
  const auto hosts = HostsOf(sandbox, request.options);
  if (!hosts.empty()) {
    if (settings.user_mode)
      throw Error(Code::kInvalidArgument, "sandbox " + sandbox.id() + " allows hosts, which need the system sandboxd: a user's own cannot set up a job's network");
    // Its own namespace (--unshare-net), made into one where every lookup and connection
    // reaches the forwarder once bwrap has made it (Job::Start's `network`).
    config.network = false;
    config.replaced_files = NameFilesOfAllowlistedJobs(settings.job_resolv_conf, settings.job_hosts);
  }
  // An offline job: what of it found no route is counted, for the owner's hint (a user's own
  // daemon cannot enter the job's namespace to count).
  launch.count_no_route = !config.network && hosts.empty() && !settings.user_mode;
  config.json_status_fd = Job::kStatusFd;
  config.args_fd = Job::kArgsFd;
  config.block_fd = Job::kBlockFd;
  config.env = JobEnvironment(user, sandbox.name(), request.options.tty, request.env);
  config.command = request.argv;
  HiddenPathsRequest hiding;
  hiding.sandbox_id = sandbox.id();
  hiding.owner_uid = user.uid;
  hiding.owner_home = user.home;
  hiding.roots = config.roots;
  hiding.configured = settings.hidden_paths;
  hiding.hide_other_homes = settings.hide_other_homes;
  // The sandbox's own (create --hide), then the job's (run --hide): both must hold no root.
  hiding.explicit_paths = sandbox.hide();
  hiding.explicit_paths.insert(hiding.explicit_paths.end(), request.options.hide.begin(), request.options.hide.end());
  // Every sandbox's merged views (this owner's others included) are under the run dir.
  hiding.always = {settings.run_dir};
  // And the bus: a job must never drive sandboxd (the daemon also refuses its calls).
  for (const auto& path : BusPathsHiddenFromJobs(settings.user_mode)) hiding.always.push_back(path);
  // In user mode the state directory is the user's, so a job could read it: every other
  // sandbox's pending changes and the database. System mode keeps it root's (0700).
  if (settings.user_mode) hiding.always.push_back(settings.state_dir);
  hiding.home_parents = DefaultHomeParents(user.home);
  hiding.owner_identity = user;
  // Unix sockets: those the owner named are bound in (the sandbox's, checked when it was made,
  // may have gone since: then nothing is there to reach; the run's own must be there now);
  // every other one the host has bound is hidden (host_sockets.h).
  for (const auto& path : sandbox.allow_sockets()) {
    if (auto found = SocketTheOwnerReaches(path, user))
      config.allowed_sockets.push_back(*found);
    else
      LogAbout({sandbox.id(), sandbox.owner(), ""}, spdlog::level::info,
               "sandbox {}: its allowed socket {} is not a socket its owner can reach now: nothing bound for the job", sandbox.id(), path);
  }
  for (const auto& path : request.options.allow_sockets)
    config.allowed_sockets.push_back(ResolveAllowedSocket(path, user, "a job in sandbox " + sandbox.id()));
  hiding.allowed_sockets = config.allowed_sockets;
  hiding.sockets = HostBoundSocketPaths();
  config.host_files = HostFilesJobsNeed();
  HiddenPaths hidden = ResolveHiddenPaths(hiding);
  config.covers = std::move(hidden.covers);
  config.hiding = HiddenPathsBwrapArgs(hidden.entries, settings.hidden_file_stand_in);
  if (request.options.tty) {
    if (!launch.stdin_fd || !isatty(launch.stdin_fd.get()))
      throw Error(Code::kInvalidArgument, "option 'tty' for a job in sandbox " + sandbox.id() + " needs a terminal as its stdin");
  }
  // Every command starts through sandboxd-job-exec: a command that cannot be run then ends the
  // job as a shell would (127, 126, with one line naming it) rather than as a sandbox that
  // could not be set up.
  config.starter = BesideHelper(settings.helper_path, "sandboxd-job-exec");
  std::vector<std::string> start = {config.starter};
  if (request.options.tty) start.push_back("--tty");
  start.push_back("--");
  config.command.insert(config.command.begin(), start.begin(), start.end());
  BwrapInvocation bwrap = BuildBwrapArgs(config);
  launch.argv = std::move(bwrap.argv);
  launch.args_data = BwrapArgsData(bwrap.options);
  if (settings.user_mode) {
    std::vector<std::string> prefix = {BesideHelper(settings.helper_path, "sandboxd-user-overlay")};
    for (size_t i = 0; i < sandbox.roots().size(); ++i) {
      // The job mounts its overlay over the root's path, with no kernel check of the upper's
      // origin (index=off): the directory there must be the one the sandbox was made over.
      sandbox.OpenLiveRoot(i);
      prefix.insert(prefix.end(), {"--overlay", sandbox.roots()[i], sandbox.paths().UpperDir(i), sandbox.paths().WorkDir(i)});
    }
    prefix.push_back("--");
    launch.argv.insert(launch.argv.begin(), prefix.begin(), prefix.end());
  }
  return launch;
}

std::function<bool()> JobLauncher::QuotaWatch(const std::shared_ptr<Sandbox>& sandbox) const {
  // A hard quota is the disk's business: a write past it fails in the job, and a job that
  // deletes must still start in a full sandbox. Else the quota is watched while jobs run.
  if (sandbox->quota_bytes() == 0 || sandbox->hard_quota()) return {};
  // Over its quota (a job stopped for it, or a quota the changes outgrew): nothing more may be
  // written until changes are committed or discarded.
  uint64_t used = ChangesBytes(*sandbox);
  if (used >= sandbox->quota_bytes())
    throw Error(Code::kQuotaExceeded, "sandbox " + sandbox->id() + " holds " + units::HumanBytes(used) + " of changes, over its quota of " +
                                          units::HumanBytes(sandbox->quota_bytes()) + "; commit or discard changes before running more jobs");
  return [weak = std::weak_ptr<Sandbox>(sandbox), quota = sandbox->quota_bytes()] {
    auto alive = weak.lock();
    return alive && ChangesBytes(*alive) > quota;
  };
}

std::shared_ptr<ChangeFeed> JobLauncher::FeedFor(const std::shared_ptr<Sandbox>& sandbox, const JobWatchers& watchers) {
  if (!watchers.seen) return nullptr;
  try {
    return feeds_.Follow(*sandbox, watchers.seen);
  } catch (const std::exception& e) {
    // The job runs all the same: the feed is a view of its work, the change set the account.
    LogAbout({sandbox->id(), sandbox->owner(), ""}, spdlog::level::warn, "sandbox {}: its changes cannot be followed live: {}",
             sandbox->id(), e.what());
    return nullptr;
  }
}

std::shared_ptr<Job> JobLauncher::Launch(const std::shared_ptr<Sandbox>& sandbox, JobRequest request, JobWatchers watchers) {
  const JobSettings& settings = parts_.settings;
  request.options.limits = WithDefaults(request.options.limits, settings.default_limits, parts_.limits.memory(), parts_.limits.tasks());
  const UserCredentials user = LookupUser(sandbox->owner());
  JobLaunch launch = Assemble(*sandbox, request, user);
  // Held until the job ends (its end gives it back); given back here if the job does not start.
  const uid_t owner = sandbox->owner();
  auto slot = std::make_shared<JobSlot>(parts_.slots, owner, settings.max_running_jobs_per_user);
  // Its id, cgroups and first process made ahead where they are ready (job_starts_ahead.h).
  std::optional<PreparedJobStart> ahead = parts_.starts_ahead ? parts_.starts_ahead->Take() : std::nullopt;
  const std::string job_id = ahead ? ahead->job_id : RandomId();
  if (!launch.stdout_fd || !launch.stderr_fd)
    launch.output = std::make_unique<CapturedOutput>(settings.output_dir, job_id, owner, parts_.output_budget, Job::kOutputCap);
  launch.over_quota = QuotaWatch(sandbox);
  if (ahead && ahead->cgroup)
    launch.cgroup = std::move(ahead->cgroup);
  else if (settings.cgroups)
    launch.cgroup = std::make_unique<JobCgroup>(*settings.cgroups, "job-" + job_id);
  std::unique_ptr<JobLimitGroups> premade = ahead ? std::move(ahead->limit_groups) : nullptr;
  if (request.options.limits.any())
    launch.limits = parts_.limits.Apply("job-" + job_id, request.options.limits, launch.cgroup ? launch.cgroup->path() : "", std::move(premade));
  else
    launch.limits = std::move(premade);  // unlimited, and removed with the job
  if (ahead) launch.starter = std::move(ahead->starter);
  if (auto hosts = HostsOf(*sandbox, request.options); !hosts.empty()) {
    JobNetworkPlan plan{std::move(hosts), BesideHelper(settings.helper_path, "sandboxd-net-forwarder"), user, {sandbox->id(), owner, job_id}};
    launch.network = [plan = std::move(plan)](pid_t pid, int pidfd) { return JobNetwork::Start(plan, pid, pidfd); };
  }
  const int64_t started = sandbox->gate().BeginJob();
  launch.start_mark = started;
  auto job = std::make_shared<Job>(job_id, sandbox->id(), request.argv);
  std::shared_ptr<FeedListener> feed;
  bool published = false;
  try {
    // A sandbox left unmounted by a commit, undo or discard that could not mount it again
    // (MountAgainAfter) is mounted before its job runs; counted in, no commit unmounts it now.
    if (!sandbox->Mounted()) sandbox->SetUp();
    // Held until the job ends: its last changes are said before its end is announced. Made once
    // the sandbox is mounted: a feed watches the merged view too, and without one it can never
    // tell a settling what was touched (change_feed.h).
    feed = std::make_shared<FeedListener>(request.options.live_feed ? FeedFor(sandbox, watchers) : nullptr);
    if (watchers.publish) watchers.publish(job);
    published = true;
    // The end callback runs on the job's own monitor thread, which the job outlives: a plain
    // pointer (a shared one would keep the job alive from its own thread).
    Job* monitored = job.get();
    auto on_end = [this, sandbox, watchers, job_id, started, slot, monitored, feed](const JobEnd& end) {
      feed->End();
      int64_t unseen_from = sandbox->gate().EndJob(started, /*settle=*/true);
      // Ends this job's settling if it is never queued (the work below fails before); once
      // queued, the settling's passes end it.
      auto queued = std::make_shared<bool>(false);
      auto settling = std::shared_ptr<void>(nullptr, [sandbox, queued](void*) {
        if (!*queued) sandbox->gate().SettleDone();
      });
      slot->GiveBack();
      const LogSubject subject{sandbox->id(), sandbox->owner(), job_id};
      LogAbout(subject, spdlog::level::info, "job {} in sandbox {} ended: {} {}", job_id, sandbox->id(), ToString(end.reason),
               end.exit_status);
      // A decision made while the job ran that the bytes it left no longer back is pending
      // before anyone hears the job ended (a listing reads decisions before it waits for the
      // settling below, and the caller of Wait may list at once).
      if (parts_.check_decisions) {
        try {
          parts_.check_decisions(*sandbox);
        } catch (const std::exception& e) {
          LogAbout(subject, spdlog::level::warn, "sandbox {}: cannot check the decisions made while job {} ran: {}", sandbox->id(),
                   job_id, e.what());
        }
      }
      if (parts_.sight_now) parts_.sight_now(*sandbox, unseen_from);
      if (watchers.finished) watchers.finished(end);
      // The caller hears the end at once (Job.Wait is answered when this returns); what the
      // job changed is taken in after that, off its time: its cost grows with the change set.
      // On the job's own thread, not a worker: calls waiting for the settling could otherwise
      // fill every worker and wait for ever.
      monitored->ThenAfterWaiters([this, sandbox, watchers, subject, unseen_from, queued, settling = std::move(settling)]() mutable {
        *queued = true;
        settling.reset();
        SettleAfterJob(
            *sandbox, parts_.sights, unseen_from, [&] { return parts_.agreed_usec(*sandbox); }, feeds_.Find(sandbox->id()),
            [&](std::optional<size_t> changes) {
              if (watchers.settled) watchers.settled(changes);
            },
            [&](const std::string& why) {
              LogAbout(subject, spdlog::level::warn, "sandbox {}: cannot record what its jobs saw of the live tree: {}", sandbox->id(),
                       why);
            },
            [&](const Sights& recorded) {
              if (parts_.sighted) parts_.sighted(*sandbox, recorded);
            });
      });
      if (watchers.ended) watchers.ended();
    };
    job->Start(std::move(launch), std::move(on_end), watchers.output);
  } catch (...) {
    // A job that did not start keeps its end callback (and with it the slot) unrun.
    if (published && watchers.unpublish) watchers.unpublish(job);
    if (feed) feed->End();
    slot->GiveBack();
    sandbox->gate().EndJob(started);
    throw;
  }
  return job;
}

}  // namespace sandboxd
