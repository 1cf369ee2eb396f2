#pragma once
/// D-Bus face of one sandbox (org.sandboxd.Sandbox1.Sandbox): every method checks, before
/// anything else, that the caller owns the sandbox, is root, or is allowed polkit's manage
/// action for it (sandbox_access.h), in a worker; all work runs on workers and replies through
/// sdbus::Result. Its signal goes to the owner's connections alone (owner_signal.h), never
/// through the generated emit* call, which broadcasts.

#include <sdbus-c++/sdbus-c++.h>

#include <memory>
#include <optional>

#include "bus/face_parts.h"
#include "bus/dbus_util.h"
#include "changes/approval.h"
#include "jobs/job_launcher.h"
#include "logging/log.h"
#include "sandbox/sandbox.h"
#include "sandbox_adaptor.h"
#include "wire_selector.h"

namespace sandboxd {

struct Caller;
using api::WireSelector;

class SandboxDBus final : public sdbus::AdaptorInterfaces<org::sandboxd::Sandbox1::Sandbox_adaptor>,
                          public std::enable_shared_from_this<SandboxDBus> {
 public:
  SandboxDBus(const SandboxFaceParts& parts, sdbus::IConnection& connection, std::shared_ptr<Sandbox> sandbox);
  ~SandboxDBus();

  const std::shared_ptr<Sandbox>& sandbox() const { return sandbox_; }
  /// ChangeSetChanged to the owner's connections, with `counted` changes when the caller has
  /// just scanned, else scanning for them. On a worker or a job's monitor thread only, never on
  /// the bus loop.
  void AnnounceChangeSet(std::optional<size_t> counted = std::nullopt);
  /// ChangesSeen (the live feed, change_feed.h) to the owner's connections; on the feed's thread.
  void AnnounceSeen(const SeenChanges& seen);
  /// Progress of a commit, undo, suspend or resume to the owner's connections; on the
  /// progress's ticker thread or the worker ending the operation.
  void AnnounceProgress(const std::string& operation, const ProgressFigures& figures);
  /// This object, held for a worker; null (and `result` answered NotFound) once it is going.
  template <typename... Outs>
  std::shared_ptr<SandboxDBus> KeepAlive(sdbus::Result<Outs...>& result);
  /// Deletes what TrashLayers set aside, in a worker of its own (the caller has its answer).
  void EmptyTrashLater();
 private:
  /// Approve, Reject and Decide, in the worker: `verdict` on `selectors`, with `note` in the
  /// review log; announces the change set.
  uint32_t DecideNow(const std::vector<WireSelector>& selectors, uint64_t flags, Verdict verdict, const std::string& note);
  /// This sandbox as the journal's fields name it (log.h).
  LogSubject Subject() const { return {sandbox_->id(), sandbox_->owner(), ""}; }
  void Run(sdbus::Result<sdbus::ObjectPath>&& result, std::vector<std::string> argv, std::string cwd,
           std::map<std::string, std::string> env, std::map<std::string, sdbus::UnixFd> fds,
           std::map<std::string, sdbus::Variant> options, uint64_t flags) override;
  void GetChanges(sdbus::Result<std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>>>&& result) override;
  void ListChanges(sdbus::Result<uint32_t>&& result, sdbus::UnixFd output) override;
  void Diff(sdbus::Result<>&& result, std::vector<WireSelector> selectors, sdbus::UnixFd output,
            std::map<std::string, sdbus::Variant> options) override;
  void Approve(sdbus::Result<uint32_t>&& result, std::vector<WireSelector> selectors, uint64_t flags) override;
  void Reject(sdbus::Result<uint32_t>&& result, std::vector<WireSelector> selectors, uint64_t flags) override;
  void Decide(sdbus::Result<uint32_t>&& result, std::vector<WireSelector> selectors, std::string verdict,
              std::map<std::string, sdbus::Variant> options, uint64_t flags) override;
  void RequestReview(sdbus::Result<>&& result, std::string message) override;
  using LoggedAct = sdbus::Struct<int64_t, std::string, std::vector<std::string>, std::string>;
  void GetReviewLog(sdbus::Result<std::vector<LoggedAct>>&& result, uint32_t limit) override;
  using ListedCommit = sdbus::Struct<int64_t, std::string, int64_t, int64_t, uint64_t, std::vector<std::string>>;
  void ListCommits(sdbus::Result<std::vector<ListedCommit>>&& result, uint32_t max_paths) override;
  void GetGitSummary(sdbus::Result<std::vector<std::map<std::string, sdbus::Variant>>>&& result,
                     std::vector<std::string> repositories) override;
  void Commit(sdbus::Result<uint32_t, std::vector<std::string>>&& result, std::vector<std::string> selectors,
              uint64_t flags) override;
  void Undo(sdbus::Result<int64_t>&& result, uint64_t flags) override;
  void Discard(sdbus::Result<>&& result) override;
  void Destroy(sdbus::Result<>&& result) override;
  void Suspend(sdbus::Result<uint64_t>&& result) override;
  void Resume(sdbus::Result<>&& result) override;

  void GetInfo(sdbus::Result<std::map<std::string, sdbus::Variant>>&& result) override;
  using ListedJob = sdbus::Struct<std::string, sdbus::ObjectPath, std::vector<std::string>, uint64_t, std::string, int32_t, std::string>;
  void ListJobs(sdbus::Result<std::vector<ListedJob>>&& result) override;

  /// Returns if `caller` may do `verb` here (owner, root, or polkit's manage action, which
  /// may ask a person: call it in a worker), logging a manager's act; throws AccessDenied
  /// (or InteractiveAuthorizationRequired) otherwise, and NotFound once destroyed.
  void Authorize(const Caller& caller, const std::string& verb, bool allow_interactive);
  /// Asks polkit whether `caller` may commit `changes` changes into the live tree (asked by
  /// the commit once it holds the sandbox and knows what it takes: commit_operation.h).
  void AuthorizeCommit(const Caller& caller, size_t changes, bool interactive);
  /// Asks polkit for what a job wants beyond its owner's own say (job_launcher.h JobConsent).
  void AuthorizeConsent(const Caller& caller, const JobConsent& consent, const std::string& command, bool interactive);
  /// What the bus does at a new job's moments: publish it, announce its end and output, the
  /// change set it leaves, and prune old jobs.
  JobWatchers WatchersOfJob();
  /// The shape of every method here: take the caller at once (on the bus thread), then in a
  /// worker Authorize it for `verb` and run `body(caller)`, replying with what it returns or
  /// throws. The worker holds this object alive until it is done.
  template <typename... Outs, typename Body>
  void InWorker(sdbus::Result<Outs...>&& result, const char* verb, bool allow_interactive, Body&& body);

  /// InWorker for a method that writes into the caller's fd `output`: `body(caller, out)` writes
  /// into `out`'s spool (output_relay.h) and the worker is free when it returns; the call is
  /// answered with what body returned once the reader has it all, or with why it ended.
  template <typename R, typename... Outs, typename Body>
  void IntoCallersFd(sdbus::Result<Outs...>&& result, const char* verb, sdbus::UnixFd output, std::string what, Body&& body);

  SandboxFaceParts parts_;
  std::shared_ptr<Sandbox> sandbox_;
};

}  // namespace sandboxd
