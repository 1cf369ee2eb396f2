#include "sandbox_dbus.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>

#include "api.h"
#include "bwrap_args.h"
#include "change_selection.h"
#include "dbus_util.h"
#include "fs_util.h"
#include "helper_client.h"
#include "job_dbus.h"
#include "job_setup.h"
#include "object_paths.h"
#include "service.h"

namespace sandboxd {
namespace {

constexpr size_t kMaxArgs = 9000;      // as bubblewrap's MAX_ARGS, in spirit
constexpr size_t kMaxEnv = 4096;

std::string JoinRoots(const std::vector<std::string>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : " ") + root;
  return text;
}

std::map<std::string, sdbus::Variant> ChangeDetails(const Change& change) {
  std::map<std::string, sdbus::Variant> details;
  EntryType shown = change.new_type != EntryType::kNone ? change.new_type : change.old_type;
  details["type"] = sdbus::Variant(std::string(ToString(shown)));
  if (change.old_type != EntryType::kNone) {
    details["old_type"] = sdbus::Variant(std::string(ToString(change.old_type)));
    details["old_mode"] = sdbus::Variant(static_cast<uint32_t>(change.old_mode));
  }
  if (change.new_type != EntryType::kNone) {
    details["new_type"] = sdbus::Variant(std::string(ToString(change.new_type)));
    details["new_mode"] = sdbus::Variant(static_cast<uint32_t>(change.new_mode));
  }
  return details;
}

}  // namespace

SandboxDBus::SandboxDBus(Service& service, sdbus::IConnection& connection, std::shared_ptr<Sandbox> sandbox)
    : AdaptorInterfaces(connection, api::SandboxPath(sandbox->id())), service_(service), sandbox_(std::move(sandbox)) {
  registerAdaptor();
}

SandboxDBus::~SandboxDBus() { unregisterAdaptor(); }

Caller SandboxDBus::AuthorizedCaller() {
  Caller caller = CurrentCaller(getObject());
  // Only the owner (or root) may touch a sandbox, reading included: its paths and contents are
  // the owner's business.
  if (caller.uid != sandbox_->owner() && !caller.IsRoot())
    throw Error(Code::kAccessDenied, "sandbox " + sandbox_->id() + " belongs to another user");
  if (sandbox_->destroyed()) throw Error(Code::kNotFound, "sandbox " + sandbox_->id() + " has been destroyed");
  return caller;
}

void SandboxDBus::AnnounceChangeSet() {
  uint32_t count = 0;
  try {
    count = static_cast<uint32_t>(sandbox_->CountChanges());
  } catch (const std::exception& e) {
    spdlog::warn("sandbox {}: cannot count changes: {}", sandbox_->id(), e.what());
  }
  emitChangeSetChanged(count);
}

void SandboxDBus::Run(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> argv, std::string cwd,
                      std::map<std::string, std::string> env, std::map<std::string, sdbus::UnixFd> fds,
                      std::map<std::string, sdbus::Variant> options, uint64_t flags) {
  Caller caller;
  try {
    caller = AuthorizedCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  auto self = service_.FindSandboxObject(sandbox_->id());
  service_.RunInWorker([this, self, result = std::move(result), argv = std::move(argv), cwd = std::move(cwd),
                        env = std::move(env), fds = std::move(fds), options = std::move(options), flags, caller]() mutable {
    ReplyWith(result, [&]() -> sdbus::ObjectPath {
      CheckFlags(flags, api::kFlagAllowInteractive);
      if (argv.empty()) throw Error(Code::kInvalidArgument, "no command given to run in sandbox " + sandbox_->id());
      if (argv.size() > kMaxArgs) throw Error(Code::kInvalidArgument, "too many arguments (more than " + std::to_string(kMaxArgs) + ")");
      if (env.size() > kMaxEnv) throw Error(Code::kInvalidArgument, "too many environment variables (more than " + std::to_string(kMaxEnv) + ")");
      for (const auto& [key, value] : options)
        throw Error(Code::kInvalidArgument, "unknown option '" + key + "' for Run");
      for (const auto& [key, fd] : fds)
        if (key != "stdin" && key != "stdout" && key != "stderr")
          throw Error(Code::kInvalidArgument, "unknown stream '" + key + "' (expected stdin, stdout or stderr)");
      std::string job_cwd = ResolveJobCwd(cwd, sandbox_->roots(), sandbox_->id());
      UserCredentials user = LookupUser(sandbox_->owner());

      JobLaunch launch;
      launch.user = user;
      launch.env = JobEnvironment(user, env);
      auto take = [&fds](const char* name) {
        auto it = fds.find(name);
        return it == fds.end() ? UniqueFd() : UniqueFd(it->second.release());
      };
      launch.stdin_fd = take("stdin");
      launch.stdout_fd = take("stdout");
      launch.stderr_fd = take("stderr");
      BwrapConfig config;
      config.bwrap = service_.options().bwrap_path;
      for (size_t i = 0; i < sandbox_->roots().size(); ++i) config.roots.push_back({sandbox_->MergedDir(i), sandbox_->roots()[i]});
      config.cwd = job_cwd;
      config.json_status_fd = 3;
      config.command = argv;
      launch.bwrap_args = BuildBwrapArgs(config);

      sandbox_->BeginJob();
      auto job = std::make_shared<Job>(RandomId(), sandbox_->id(), argv);
      std::shared_ptr<JobDBus> job_object;
      try {
        job_object = service_.PublishJob(job, sandbox_);
        std::weak_ptr<JobDBus> weak_job = job_object;
        std::weak_ptr<SandboxDBus> weak_self = self;
        std::string sandbox_id = sandbox_->id();
        std::string job_id = job->id();
        Service* service = &service_;
        auto sandbox = sandbox_;
        job->Start(std::move(launch), [weak_job, weak_self, sandbox, service, sandbox_id, job_id](const JobEnd& end) {
          sandbox->EndJob();
          spdlog::info("job {} in sandbox {} ended: {} {}", job_id, sandbox_id, end.reason, end.exit_status);
          if (auto j = weak_job.lock()) j->AnnounceFinished(end);
          if (auto s = weak_self.lock()) s->AnnounceChangeSet();
          service->PruneJobs(sandbox_id, job_id);
        });
      } catch (...) {
        sandbox_->EndJob();
        throw;
      }
      spdlog::info("job {} started in sandbox {} by uid {}: {}", job->id(), sandbox_->id(), caller.uid, argv.front());
      return sdbus::ObjectPath(api::JobPath(job->id()));
    });
  });
}

void SandboxDBus::GetChanges(sdbus::Result<std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>>>&& result) {
  try {
    AuthorizedCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  auto self = service_.FindSandboxObject(sandbox_->id());
  service_.RunInWorker([this, self, result = std::move(result)]() mutable {
    ReplyWith(result, [&] {
      std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>> list;
      for (const auto& root : sandbox_->Scan())
        for (const auto& change : root.changes)
          list.emplace_back(static_cast<uint32_t>(root.root), DisplayPath(change, sandbox_->PathPrefix(root.root)),
                            std::string(ToString(change.kind)), ChangeDetails(change));
      return list;
    });
  });
}

void SandboxDBus::Diff(sdbus::Result<>&& result, std::vector<std::string> selectors, sdbus::UnixFd output) {
  try {
    AuthorizedCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  auto self = service_.FindSandboxObject(sandbox_->id());
  service_.RunInWorker([this, self, result = std::move(result), selectors = std::move(selectors),
                        out = UniqueFd(output.release())]() mutable {
    ReplyWith(result, [&] {
      if (!out) throw Error(Code::kInvalidArgument, "no output fd given for the diff");
      int out_flags = fcntl(out.get(), F_GETFL);
      if (out_flags < 0 || (out_flags & O_ACCMODE) == O_RDONLY)
        throw Error(Code::kInvalidArgument, "the diff output fd is not open for writing");
      std::vector<std::string> prefixes;
      for (size_t i = 0; i < sandbox_->roots().size(); ++i) prefixes.push_back(sandbox_->PathPrefix(i));
      auto selected = SelectChanges(sandbox_->Scan(), selectors, prefixes, sandbox_->id());
      std::vector<UniqueFd> fds;
      std::vector<HelperRoot> roots;
      for (auto& root : selected) {
        fds.push_back(sandbox_->OpenLiveRoot(root.root));
        fds.push_back(sandbox_->OpenUpper(root.root));
        roots.push_back({fds[fds.size() - 2].get(), fds.back().get(), prefixes[root.root], std::move(root.changes)});
      }
      // The diff is produced by the helper running as the owner: it reads the live tree and the
      // upper with the owner's rights, so a diff can never show what the owner could not read.
      RunHelper(service_.options().helper_path, "diff", LookupUser(sandbox_->owner()), roots, out.get());
    });
  });
}

void SandboxDBus::Commit(sdbus::Result<uint32_t>&& result, uint64_t flags) {
  Caller caller;
  try {
    caller = AuthorizedCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  auto self = service_.FindSandboxObject(sandbox_->id());
  service_.RunInWorker([this, self, result = std::move(result), flags, caller]() mutable {
    ReplyWith(result, [&]() -> uint32_t {
      CheckFlags(flags, api::kFlagAllowInteractive | api::kFlagCommitAll);
      size_t pending = sandbox_->CountChanges();
      service_.authority().Check(caller, api::kActionCommit,
                                 {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())},
                                  {"changes", std::to_string(pending)}, {"verb", "commit"}},
                                 flags & api::kFlagAllowInteractive,
                                 "commit sandbox " + sandbox_->id() + " into " + JoinRoots(sandbox_->roots()));
      // Without approvals (a later feature) only --all selects anything to commit.
      if (!(flags & api::kFlagCommitAll) || pending == 0) return 0;

      ExclusiveOperation exclusive(*sandbox_, "commit");
      sandbox_->Unmount();
      uint32_t committed = 0;
      try {
        // The files move in the helper with the owner's credentials: a commit can never write
        // where its owner could not.
        auto outcome = service_.commits().CommitAll(*sandbox_);
        committed = static_cast<uint32_t>(outcome.committed);
        for (const auto& skipped : outcome.skipped) spdlog::warn("sandbox {}: {}", sandbox_->id(), skipped);
      } catch (...) {
        // A commit that could not be taken back leaves the sandbox unmounted and frozen until
        // a restart settles it from the journal; a job must never run over half a commit.
        if (!sandbox_->broken()) {
          try {
            sandbox_->SetUp();
          } catch (const std::exception& e) {
            spdlog::error("sandbox {}: cannot remount after a failed commit: {}", sandbox_->id(), e.what());
          }
        }
        AnnounceChangeSet();
        throw;
      }
      sandbox_->SetUp();
      spdlog::info("sandbox {}: committed {} changes for uid {}", sandbox_->id(), committed, caller.uid);
      AnnounceChangeSet();
      return committed;
    });
  });
}

void SandboxDBus::Discard(sdbus::Result<>&& result) {
  try {
    AuthorizedCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  auto self = service_.FindSandboxObject(sandbox_->id());
  service_.RunInWorker([this, self, result = std::move(result)]() mutable {
    ReplyWith(result, [&] {
      ExclusiveOperation exclusive(*sandbox_, "discard");
      sandbox_->Unmount();
      try {
        sandbox_->ClearLayers();
      } catch (...) {
        sandbox_->SetUp();
        throw;
      }
      sandbox_->SetUp();
      spdlog::info("sandbox {}: changes discarded", sandbox_->id());
      AnnounceChangeSet();
    });
  });
}

void SandboxDBus::Destroy(sdbus::Result<>&& result) {
  try {
    AuthorizedCaller();
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return;
  }
  auto self = service_.FindSandboxObject(sandbox_->id());
  service_.RunInWorker([this, self, result = std::move(result)]() mutable {
    bool destroyed = false;
    ReplyWith(result, [&] {
      ExclusiveOperation exclusive(*sandbox_, "destroy");
      // Once the record is gone the sandbox is gone, whatever happens next: a restart sweeps
      // up what is left (SweepOrphans).
      service_.registry().Forget(sandbox_->id());
      sandbox_->MarkDestroyed();
      spdlog::info("sandbox {} destroyed", sandbox_->id());
      destroyed = true;
    });
    if (!destroyed) return;
    // After the reply, off the caller's time: drop the object (never from inside its own
    // handler), unmount (which syncs the upper's file system) and delete the files.
    service_.UnpublishSandbox(sandbox_->id());
    try {
      sandbox_->UnmountForGood();
      service_.registry().RemoveFiles(sandbox_->id());
      service_.registry().EmptyTrash();
    } catch (const std::exception& e) {
      spdlog::warn("sandbox {}: cannot remove its files: {}", sandbox_->id(), e.what());
    }
  });
}

std::map<std::string, sdbus::Variant> SandboxDBus::GetInfo() {
  return GuardSync([&] {
    AuthorizedCaller();
    return std::map<std::string, sdbus::Variant>{
        {"id", sdbus::Variant(sandbox_->id())},
        {"name", sdbus::Variant(sandbox_->name())},
        {"owner", sdbus::Variant(static_cast<uint32_t>(sandbox_->owner()))},
        {"roots", sdbus::Variant(sandbox_->roots())},
        {"state", sdbus::Variant(sandbox_->state())},
        {"created_usec", sdbus::Variant(static_cast<uint64_t>(sandbox_->created_usec()))},
        {"running_jobs", sdbus::Variant(sandbox_->running_jobs())},
    };
  });
}

}  // namespace sandboxd
