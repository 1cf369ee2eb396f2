#include "bus/sandbox_dbus.h"

#include <fcntl.h>

#include <limits>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "api.h"
#include "runtime/clock.h"
#include "runtime/output_relay.h"
#include "bus/call_gate.h"
#include "bus/caller_watch.h"
#include "bus/dbus_util.h"
#include "bus/job_dbus.h"
#include "bus/job_options.h"
#include "bus/object_table.h"
#include "bus/owner_signal.h"
#include "bus/polkit.h"
#include "bus/sandbox_access.h"
#include "bus/sandbox_announcer.h"
#include "commit/commit_journal.h"
#include "lifecycle/sandbox_removal.h"
#include "object_paths.h"
#include "operations/change_reports.h"
#include "operations/commit_operation.h"
#include "operations/decide_operation.h"
#include "operations/git_report.h"
#include "operations/suspend_operation.h"
#include "quote_path.h"
#include "review/review_log.h"
#include "sandbox/sandbox_registry.h"
#include "selector.h"
#include "utf8.h"

namespace sandboxd {
namespace {

/// Each rule as --allow-host takes it ("pypi.org", "*.example.org:8443").
std::vector<std::string> HostRuleTexts(const std::vector<network::HostRule>& rules) {
  std::vector<std::string> texts;
  for (const auto& rule : rules) texts.push_back(network::FormatHostRule(rule));
  return texts;
}


/// Refuses a note or a review's message longer than the review log keeps.
void CheckNote(const std::string& text, const char* what, const std::string& sandbox_id) {
  if (text.size() > ReviewLog::kMaxNoteBytes)
    throw Error(Code::kInvalidArgument, std::string(what) + " takes at most " + std::to_string(ReviewLog::kMaxNoteBytes) + " bytes, not " +
                                            std::to_string(text.size()) + " (sandbox " + sandbox_id + ")");
}

/// Refuses an output fd that is missing or not open for writing, naming `what` it was for.
void CheckWritable(const UniqueFd& out, const std::string& what) {
  if (!out) throw Error(Code::kInvalidArgument, "no output fd given for " + what);
  int out_flags = fcntl(out.get(), F_GETFL);
  if (out_flags < 0 || (out_flags & O_ACCMODE) == O_RDONLY)
    throw Error(Code::kInvalidArgument, "the output fd of " + what + " is not open for writing");
}

/// The name a wire name (utf8.h) stands for, as bytes; one that no quoting could have written
/// is taken as itself (it then names nothing, and is refused so by name).
std::string NameOfWire(const std::string& wire) { return api::NameFromWire(wire).value_or(wire); }

/// Commit's selectors: paths by their wire names; from here on they hold the names' bytes.
std::vector<api::Selector> PathsFromWire(const std::vector<std::string>& paths) {
  std::vector<api::Selector> selectors;
  for (const auto& path : paths) selectors.push_back(api::Selector{NameOfWire(path)});
  return selectors;
}

/// Structured selectors (path, hunk, part) as they came over the bus: the path is never read
/// for a hunk number, whatever it holds (a job may name a file "run.sh:1").
std::vector<api::Selector> SelectorsFromWire(const std::vector<WireSelector>& wire) {
  std::vector<api::Selector> selectors;
  selectors.reserve(wire.size());
  for (const auto& each : wire) {
    const auto& [path, hunk, part] = static_cast<const std::tuple<std::string, uint32_t, uint32_t>&>(each);
    api::Selector selector{NameOfWire(path)};
    if (hunk > static_cast<uint32_t>(std::numeric_limits<int>::max()) || part > static_cast<uint32_t>(std::numeric_limits<int>::max()))
      throw Error(Code::kInvalidArgument, "hunk " + std::to_string(hunk) + " part " + std::to_string(part) + " of '" + selector.path +
                                              "' is past any hunk a diff can have");
    if (part > 0 && hunk == 0)
      throw Error(Code::kInvalidArgument, "selector of '" + selector.path + "' names part " + std::to_string(part) + " of no hunk");
    if (hunk > 0) selector.hunk = static_cast<int>(hunk);
    selector.part = static_cast<int>(part);
    selectors.push_back(std::move(selector));
  }
  return selectors;
}

/// Diff's options: "binary" (b) alone, so far.
DiffAsked DiffOptionsFrom(const std::map<std::string, sdbus::Variant>& options) {
  DiffAsked diff;
  for (const auto& [name, value] : options) {
    if (name != "binary") throw Error(Code::kInvalidArgument, "Diff knows no option '" + name + "'");
    if (value.peekValueType() != "b") throw Error(Code::kInvalidArgument, "Diff's option 'binary' is a boolean (b)");
    diff.binary = value.get<bool>();
  }
  return diff;
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

/// One line per skipped entry, up to a bound: a job can make a million sockets, and the reply
/// must fit a D-Bus message. The journal has every line.
std::vector<std::string> BoundedLines(const std::vector<std::string>& lines) {
  std::vector<std::string> bounded;
  for (const auto& line : lines) {
    if (bounded.size() == kMaxSkippedLines) {
      bounded.push_back("... and " + std::to_string(lines.size() - kMaxSkippedLines) + " more entries skipped (the journal names each)");
      break;
    }
    bounded.push_back(api::CutToBytes(api::EscapeInvalidUtf8(line), 8192));
  }
  return bounded;
}

/// A detail of a listed change as the variant GetChanges sends: the sizes as "t", the other
/// numbers as "u" (change_listing.h).
sdbus::Variant VariantOf(const std::string& key, const nlohmann::json& value) {
  if (value.is_string()) return sdbus::Variant(value.get<std::string>());
  if (value.is_boolean()) return sdbus::Variant(value.get<bool>());
  if (value.is_array()) return sdbus::Variant(value.get<std::vector<uint32_t>>());
  if (key == "old_size" || key == "new_size") return sdbus::Variant(value.get<uint64_t>());
  return sdbus::Variant(value.get<uint32_t>());
}

}  // namespace

SandboxDBus::SandboxDBus(const SandboxFaceParts& parts, sdbus::IConnection& connection, std::shared_ptr<Sandbox> sandbox)
    : AdaptorInterfaces(connection, api::SandboxPath(sandbox->id())), parts_(parts), sandbox_(std::move(sandbox)) {
  registerAdaptor();
  // The operations that report progress hold this object (KeepAlive) while they run.
  sandbox_->gate().SetProgressSink([this](const std::string& operation, const ProgressFigures& figures) { AnnounceProgress(operation, figures); });
}

SandboxDBus::~SandboxDBus() {
  sandbox_->gate().SetProgressSink({});
  unregisterAdaptor();
}

void SandboxDBus::AnnounceProgress(const std::string& operation, const ProgressFigures& figures) {
  EmitToOwner(getObject(), parts_.peers, sandbox_->owner(), INTERFACE_NAME, "Progress", operation, std::string(ToString(figures.phase)), figures.entries_done,
              figures.entries_total, figures.bytes_done, figures.bytes_total);
}

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
  if (sandbox_->gate().destroyed()) throw Error(Code::kNotFound, "sandbox " + sandbox_->id() + " has been destroyed");
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
  if (!self) return;
  parts_.calls.ServeTaken(caller, std::move(result),
                          [this, self, body = std::forward<Body>(body), verb, allow_interactive](const Caller& caller) mutable {
                            Authorize(caller, verb, allow_interactive);
                            return body(caller);
                          });
}

template <typename R, typename... Outs, typename Body>
void SandboxDBus::IntoCallersFd(sdbus::Result<Outs...>&& result, const char* verb, sdbus::UnixFd output, std::string what,
                                Body&& body) {
  Caller caller;
  if (!TakeCaller(getObject(), result, caller)) return;
  auto self = KeepAlive(result);
  if (!self || !parts_.calls.Admit(caller, result)) return;
  auto shared = std::make_shared<sdbus::Result<Outs...>>(std::move(result));
  parts_.calls.RunForCaller(caller.uid, [this, self, shared, out = UniqueFd(output.release()), body = std::forward<Body>(body), caller,
                                         verb, what = std::move(what)]() mutable {
    std::shared_ptr<RelayedOutput> relayed;
    auto answer = std::make_shared<std::conditional_t<std::is_void_v<R>, bool, R>>();
    try {
      Authorize(caller, verb, false);
      CheckWritable(out, what);
      // The reply waits for the reader, in the relay, which holds no worker (output_relay.h).
      relayed = parts_.calls.relay().Start(caller.uid, std::move(out), what, [self, shared, answer, uid = caller.uid](const Error* end) {
        // Once per call: a reader given up on, gone, or a producer that failed.
        if (end) LogAbout(self->Subject(), spdlog::level::info, "uid {}: {}", uid, end->what());
        ReplyWith(*shared, [&]() -> R {
          if (end) throw *end;
          if constexpr (!std::is_void_v<R>) return *answer;
        });
      });
      if constexpr (std::is_void_v<R>) {
        body(caller, *relayed);
      } else {
        *answer = body(caller, *relayed);
      }
      relayed->Finish();
    } catch (const Error& e) {
      if (relayed) return relayed->Fail(e);
      ReplyWith(*shared, [&]() -> R { throw; });
    } catch (...) {
      if (relayed) return relayed->Fail(Error(Code::kFailed, CurrentExceptionAsDBusError().getMessage()));
      ReplyWith(*shared, [&]() -> R { throw; });
    }
  });
}

void SandboxDBus::EmptyTrashLater() {
  parts_.calls.RunDaemonWork([&registry = parts_.registry] {
    try {
      registry.EmptyTrash();
    } catch (const std::exception& e) {
      spdlog::warn("cannot empty the trash: {}", e.what());
    }
  });
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

void SandboxDBus::AnnounceSeen(const SeenChanges& seen) {
  std::vector<sdbus::Struct<uint32_t, std::string, std::string>> listed;
  listed.reserve(seen.listed.size());
  for (const auto& change : seen.listed)
    listed.emplace_back(static_cast<uint32_t>(change.root), api::WireName(sandbox_->PathPrefix(change.root) + change.path), change.kind);
  EmitToOwner(getObject(), parts_.peers, sandbox_->owner(), INTERFACE_NAME, "ChangesSeen", listed,
              static_cast<uint32_t>(std::min<size_t>(seen.more, UINT32_MAX)), seen.lost);
}

void SandboxDBus::Run(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> argv, std::string cwd,
                      std::map<std::string, std::string> env, std::map<std::string, sdbus::UnixFd> fds,
                      std::map<std::string, sdbus::Variant> options, uint64_t flags) {
  const bool interactive = flags & api::kFlagAllowInteractive;
  InWorker(std::move(result), "run", interactive, [this, argv = std::move(argv), cwd = std::move(cwd), env = std::move(env),
                                                   fds = std::move(fds), options = std::move(options), flags,
                                                   interactive](const Caller& caller) mutable -> sdbus::ObjectPath {
    CheckFlags(flags, api::kFlagAllowInteractive);
    JobRequest request = JobRequestFromCall(std::move(argv), std::move(cwd), std::move(env), std::move(fds), options, sandbox_->id());
    AuthorizeConsent(caller, parts_.jobs.ConsentNeeded(*sandbox_, request), request.argv.front(), interactive);
    const bool attached = request.Attached();
    const std::string command = request.argv.front();
    auto job = parts_.jobs.Launch(sandbox_, std::move(request), WatchersOfJob());
    if (attached) parts_.callers.Track(caller.sender, job);
    LogAbout({sandbox_->id(), sandbox_->owner(), job->id()}, spdlog::level::info, "job {} started in sandbox {} by uid {}: {}", job->id(),
             sandbox_->id(), caller.uid, command);
    return sdbus::ObjectPath(api::JobPath(job->id()));
  });
}

void SandboxDBus::AuthorizeConsent(const Caller& caller, const JobConsent& consent, const std::string& command, bool interactive) {
  if (consent.network)
    parts_.authority.Check(caller, api::kActionNetwork,
                           {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())}, {"command", command}, {"verb", "run"}},
                           interactive, "run " + command + " with network access in sandbox " + sandbox_->id());
  if (!consent.hosts.empty())
    parts_.authority.Check(caller, api::kActionNetwork,
                           {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())}, {"command", command}, {"verb", "run"},
                            {"hosts", consent.hosts}},
                           interactive, "run " + command + " in sandbox " + sandbox_->id() + " with access to " + consent.hosts);
  if (!consent.above.empty())
    parts_.authority.Check(caller, api::kActionManage,
                           {{"sandbox", sandbox_->id()}, {"command", command}, {"verb", "run"}, {"limits", consent.above}}, interactive,
                           "run " + command + " in sandbox " + sandbox_->id() + " with " + consent.above);
}

JobWatchers SandboxDBus::WatchersOfJob() {
  // The job outlives this call and may outlive this object (a destroy): weak references only,
  // and the parts, which are the daemon's.
  auto published = std::make_shared<std::weak_ptr<JobDBus>>();
  std::weak_ptr<SandboxDBus> weak_self = weak_from_this();
  ObjectTable& objects = parts_.objects;
  JobWatchers watchers;
  watchers.publish = [published, &objects, sandbox = sandbox_](const std::shared_ptr<Job>& job) {
    *published = objects.PublishJob(job, sandbox);
  };
  watchers.unpublish = [published, &objects, sandbox_id = sandbox_->id()](const std::shared_ptr<Job>& job) {
    objects.UnpublishJob(sandbox_id, job->id());
    published->reset();
  };
  watchers.finished = [published](const JobEnd& end) {
    if (auto job = published->lock()) job->AnnounceFinished(end);
  };
  watchers.output = [published](uint64_t captured_bytes) {
    if (auto job = published->lock()) job->AnnounceOutput(captured_bytes);
  };
  watchers.settled = [weak_self](std::optional<size_t> changes) {
    if (auto self = weak_self.lock()) self->AnnounceChangeSet(changes);
  };
  watchers.seen = [weak_self](const SeenChanges& seen) {
    if (auto self = weak_self.lock()) self->AnnounceSeen(seen);
  };
  watchers.ended = [published, &objects, sandbox_id = sandbox_->id()] {
    if (auto job = published->lock()) objects.PruneJobs(sandbox_id, job->job()->id());
  };
  return watchers;
}

void SandboxDBus::GetChanges(sdbus::Result<std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>>>&& result) {
  InWorker(std::move(result), "get-changes", false, [this](const Caller&) mutable {
    std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>> list;
    for (auto& listed : ListedChanges(parts_.operations, *sandbox_, kMaxChangesInOneReply, kMaxReplyBytes)) {
      std::map<std::string, sdbus::Variant> details;
      for (const auto& [key, value] : listed.items())
        if (key != "root" && key != "path" && key != "kind") details.emplace(key, VariantOf(key, value));
      list.emplace_back(listed["root"].get<uint32_t>(), listed["path"].get<std::string>(), listed["kind"].get<std::string>(), std::move(details));
    }
    return list;
  });
}

void SandboxDBus::ListChanges(sdbus::Result<uint32_t>&& result, sdbus::UnixFd output) {
  IntoCallersFd<uint32_t>(std::move(result), "list-changes", std::move(output), "the change list of sandbox " + sandbox_->id(),
                          [this](const Caller&, RelayedOutput& out) { return WriteChangeList(parts_.operations, *sandbox_, out); });
}

void SandboxDBus::Diff(sdbus::Result<>&& result, std::vector<WireSelector> selectors, sdbus::UnixFd output,
                       std::map<std::string, sdbus::Variant> options) {
  IntoCallersFd<void>(std::move(result), "diff", std::move(output), "the diff of sandbox " + sandbox_->id(),
                      [this, selectors = std::move(selectors), options = std::move(options)](const Caller&, RelayedOutput& out) {
                        WriteDiff(parts_.operations, *sandbox_, SelectorsFromWire(selectors), DiffOptionsFrom(options), out);
                      });
}

void SandboxDBus::Approve(sdbus::Result<uint32_t>&& result, std::vector<WireSelector> selectors, uint64_t flags) {
  InWorker(std::move(result), "approve", false, [this, selectors = std::move(selectors), flags](const Caller&) {
    return DecideNow(selectors, flags, Verdict::kApproved, "");
  });
}

void SandboxDBus::Reject(sdbus::Result<uint32_t>&& result, std::vector<WireSelector> selectors, uint64_t flags) {
  InWorker(std::move(result), "reject", false, [this, selectors = std::move(selectors), flags](const Caller&) {
    return DecideNow(selectors, flags, Verdict::kRejected, "");
  });
}

void SandboxDBus::Decide(sdbus::Result<uint32_t>&& result, std::vector<WireSelector> selectors, std::string verdict,
                         std::map<std::string, sdbus::Variant> options, uint64_t flags) {
  const char* verb = verdict == "approved" ? "approve" : verdict == "rejected" ? "reject" : "decide";
  InWorker(std::move(result), verb, false,
           [this, selectors = std::move(selectors), verdict = std::move(verdict), options = std::move(options), flags](const Caller&) {
    std::optional<Verdict> decided = VerdictFromString(verdict);
    if (!decided || *decided == Verdict::kPending)
      throw Error(Code::kInvalidArgument, "a decision is approved or rejected, not '" + api::EscapeControlBytes(verdict) + "'");
    std::string note;
    for (const auto& [key, value] : options) {
      if (key != "note" || value.peekValueType() != "s")
        throw Error(Code::kInvalidArgument, "unknown option '" + api::EscapeControlBytes(key) + "' (or not a string) for a decision in sandbox " + sandbox_->id());
      note = value.get<std::string>();
    }
    CheckNote(note, "a decision's note", sandbox_->id());
    return DecideNow(selectors, flags, *decided, note);
  });
}

uint32_t SandboxDBus::DecideNow(const std::vector<WireSelector>& selectors, uint64_t flags, Verdict verdict, const std::string& note) {
  // Decisions ask no one of their owner, and take no "interactive" bit.
  CheckFlags(flags, api::kFlagEveryChange);
  size_t decided = DecideChanges(parts_.operations, *sandbox_, SelectorsFromWire(selectors), flags & api::kFlagEveryChange, verdict, note);
  AnnounceChangeSet();
  return static_cast<uint32_t>(decided);
}

void SandboxDBus::RequestReview(sdbus::Result<>&& result, std::string message) {
  InWorker(std::move(result), "request-review", false, [this, message = std::move(message)](const Caller& caller) {
    CheckNote(message, "a review's message", sandbox_->id());
    const int64_t now = TheSystemClock().NowUsec();
    parts_.operations.review_log.Add(sandbox_->id(), {.time_usec = now, .act = ReviewAct::kReviewAsked, .what = {}, .note = message});
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: uid {} asks for a review: {}", sandbox_->id(), caller.uid, api::EscapeControlBytes(message));
    EmitToOwner(getObject(), parts_.peers, sandbox_->owner(), INTERFACE_NAME, "ReviewRequested", message, now);
  });
}

void SandboxDBus::GetReviewLog(sdbus::Result<std::vector<LoggedAct>>&& result, uint32_t limit) {
  InWorker(std::move(result), "get-review-log", false, [this, limit](const Caller&) {
    if (limit > ReviewLog::kKeptEntries)
      throw Error(Code::kInvalidArgument, "the review log of sandbox " + sandbox_->id() + " keeps " + std::to_string(ReviewLog::kKeptEntries) +
                                              " entries; ask for at most that many, not " + std::to_string(limit));
    std::vector<LoggedAct> logged;
    for (auto& entry : parts_.operations.review_log.Recent(sandbox_->id(), limit))
      logged.emplace_back(entry.time_usec, std::string(ToString(entry.act)), std::move(entry.what), std::move(entry.note));
    return logged;
  });
}

void SandboxDBus::Commit(sdbus::Result<uint32_t, std::vector<std::string>>&& result, std::vector<std::string> selectors,
                         uint64_t flags) {
  const bool interactive = flags & api::kFlagAllowInteractive;
  InWorker(std::move(result), "commit", interactive, [this, selectors = PathsFromWire(selectors), flags,
                                                      interactive](const Caller& caller) mutable {
    CheckFlags(flags, api::kFlagAllowInteractive | api::kFlagCommitAll | api::kFlagForce);
    CommitAsked asked{std::move(selectors), (flags & api::kFlagCommitAll) != 0, (flags & api::kFlagForce) != 0};
    // Asked once the commit knows what it takes, while it holds the sandbox (commit_operation.h).
    bool consented = false;
    auto consent = [&](size_t changes) {
      AuthorizeCommit(caller, changes, interactive);
      consented = true;
    };
    Committed committed;
    try {
      committed = CommitChanges(parts_.operations, *sandbox_, asked, consent);
    } catch (...) {
      if (consented) AnnounceChangeSet();  // a commit that failed or was refused on the way settled decisions
      if (sandbox_->gate().broken()) parts_.announcer.StateChanged(*sandbox_);
      throw;
    }
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: committed {} changes for uid {}", sandbox_->id(), committed.committed, caller.uid);
    AnnounceChangeSet();
    return std::tuple<uint32_t, std::vector<std::string>>{static_cast<uint32_t>(committed.committed), BoundedLines(committed.skipped)};
  });
}

void SandboxDBus::AuthorizeCommit(const Caller& caller, size_t changes, bool interactive) {
  parts_.authority.Check(caller, api::kActionCommit,
                         {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())}, {"changes", std::to_string(changes)}, {"verb", "commit"}},
                         interactive, "commit sandbox " + sandbox_->id() + " into " + JoinRoots(sandbox_->roots()));
}

void SandboxDBus::Undo(sdbus::Result<int64_t>&& result, uint64_t flags) {
  const bool interactive = flags & api::kFlagAllowInteractive;
  InWorker(std::move(result), "undo", interactive, [this, flags, interactive](const Caller& caller) mutable -> int64_t {
    CheckFlags(flags, api::kFlagAllowInteractive);
    parts_.authority.Check(caller, api::kActionCommit, {{"sandbox", sandbox_->id()}, {"roots", JoinRoots(sandbox_->roots())}, {"verb", "undo"}},
                           interactive, "undo the last commit of sandbox " + sandbox_->id() + " in " + JoinRoots(sandbox_->roots()));
    int64_t commit = 0;
    try {
      commit = UndoLastCommit(parts_.operations, *sandbox_);
    } catch (...) {
      if (sandbox_->gate().broken()) parts_.announcer.StateChanged(*sandbox_);
      throw;
    }
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: commit {} undone for uid {}", sandbox_->id(), commit, caller.uid);
    AnnounceChangeSet();
    // The number the sandbox's log shows it by, not the journal's daemon-wide id.
    return parts_.operations.journal.NumberOf(sandbox_->id(), commit);
  });
}

void SandboxDBus::ListCommits(sdbus::Result<std::vector<ListedCommit>>&& result, uint32_t max_paths) {
  InWorker(std::move(result), "list-commits", false, [this, max_paths](const Caller&) {
    constexpr uint32_t kMaxPaths = 10000;
    if (max_paths > kMaxPaths)
      throw Error(Code::kInvalidArgument, "ListCommits names at most " + std::to_string(kMaxPaths) + " paths of a commit, not " +
                                              std::to_string(max_paths) + " (sandbox " + sandbox_->id() + ")");
    std::vector<ListedCommit> listed;
    for (auto& commit : parts_.operations.journal.LiveCommits(sandbox_->id(), max_paths)) {
      std::vector<std::string> paths;
      for (const auto& [root, path] : commit.paths) paths.push_back(api::WireName(sandbox_->PathPrefix(root) + path));
      listed.emplace_back(commit.number, commit.undone ? "undone" : "committed", commit.started_usec, commit.finished_usec, commit.entries,
                          std::move(paths));
    }
    return listed;
  });
}

void SandboxDBus::GetGitSummary(sdbus::Result<std::vector<std::map<std::string, sdbus::Variant>>>&& result,
                                std::vector<std::string> repositories) {
  std::vector<std::string> names;
  for (const auto& wire : repositories) names.push_back(NameOfWire(wire));
  InWorker(std::move(result), "get-git-summary", false, [this, repositories = std::move(names)](const Caller&) {
    std::vector<std::map<std::string, sdbus::Variant>> summaries;
    for (const auto& summary : SummarizeRepositories(parts_.operations, *sandbox_, repositories)) {
      auto& out = summaries.emplace_back();
      for (const char* name : {"branch", "was_branch"}) out[name] = sdbus::Variant(api::WireName(summary.at(name).get<std::string>()));
      for (const char* name : {"from", "to", "index"}) out[name] = sdbus::Variant(api::EscapeInvalidUtf8(summary.at(name).get<std::string>()));
      out["new_branch"] = sdbus::Variant(summary.at("new_branch").get<bool>());
      for (const char* name : {"ahead", "behind"}) out[name] = sdbus::Variant(summary.at(name).get<int64_t>());
    }
    return summaries;
  });
}

void SandboxDBus::Discard(sdbus::Result<>&& result) {
  InWorker(std::move(result), "discard", false, [this](const Caller&) mutable {
    DiscardChanges(parts_.operations, *sandbox_);
    EmptyTrashLater();
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: changes discarded", sandbox_->id());
    AnnounceChangeSet();
  });
}

void SandboxDBus::Suspend(sdbus::Result<uint64_t>&& result) {
  InWorker(std::move(result), "suspend", false, [this](const Caller& caller) mutable -> uint64_t {
    uint64_t bytes = SuspendSandbox(parts_.operations, parts_.suspension, *sandbox_);
    parts_.announcer.StateChanged(*sandbox_);
    LogAbout(Subject(), spdlog::level::info, "sandbox {}: suspended for uid {} ({} bytes archived)", sandbox_->id(), caller.uid, bytes);
    EmptyTrashLater();
    return bytes;
  });
}

void SandboxDBus::Resume(sdbus::Result<>&& result) {
  InWorker(std::move(result), "resume", false, [this](const Caller& caller) mutable {
    ResumeSandbox(parts_.suspension, *sandbox_);
    parts_.announcer.StateChanged(*sandbox_);
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
      parts_.removal.Forget(*sandbox_, "destroy");
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
    std::map<std::string, sdbus::Variant> info{
        {"id", sdbus::Variant(sandbox_->id())},
        {"name", sdbus::Variant(sandbox_->name())},
        {"owner", sdbus::Variant(static_cast<uint32_t>(sandbox_->owner()))},
        {"roots", sdbus::Variant(sandbox_->roots())},
        {"state", sdbus::Variant(std::string(ToString(sandbox_->gate().state())))},
        {"created_usec", sdbus::Variant(static_cast<uint64_t>(sandbox_->created_usec()))},
        {"running_jobs", sdbus::Variant(sandbox_->running_jobs())},
        {"network", sdbus::Variant(sandbox_->network())},
        {"shared", sdbus::Variant(sandbox_->shared())},
        {"made_by_try", sdbus::Variant(sandbox_->made_by_try())},
        {"scratch_home", sdbus::Variant(sandbox_->scratch_home())},
        {"quota_bytes", sdbus::Variant(sandbox_->quota_bytes())},
        {"ttl_sec", sdbus::Variant(sandbox_->ttl_sec())},
        {"hide", sdbus::Variant(sandbox_->hide())},
        {"allow_sockets", sdbus::Variant(sandbox_->allow_sockets())},
        {"allow_hosts", sdbus::Variant(HostRuleTexts(sandbox_->allow_hosts()))},
        {"last_used_usec", sdbus::Variant(static_cast<uint64_t>(sandbox_->last_used_usec()))},
    };
    if (auto asked = parts_.operations.review_log.OpenRequest(sandbox_->id())) {
      info["review_requested"] = sdbus::Variant(asked->note);
      info["review_requested_usec"] = sdbus::Variant(asked->time_usec);
    }
    return info;
  });
}

void SandboxDBus::ListJobs(sdbus::Result<std::vector<ListedJob>>&& result) {
  InWorker(std::move(result), "list-jobs", false, [this](const Caller&) {
    std::vector<ListedJob> listed;
    for (const auto& job : parts_.objects.JobsOf(sandbox_->id())) {
      const JobState state = job->state();
      const bool finished = state == JobState::kFinished;
      JobEnd end = finished ? job->end() : JobEnd{};
      listed.emplace_back(job->id(), sdbus::ObjectPath(api::JobPath(job->id())), job->argv(), static_cast<uint64_t>(job->created_usec()),
                          std::string(ToString(state)), finished ? end.exit_status : 0,
                          finished ? std::string(ToString(end.reason)) : std::string());
    }
    return listed;
  });
}

}  // namespace sandboxd
