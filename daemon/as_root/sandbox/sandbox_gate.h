#pragma once
/// A sandbox's gate and where it is in its life. Jobs may run together; an exclusive operation
/// (commit, undo, discard, suspend, resume, destroy) runs alone, never beside a job nor beside
/// the settling of a job's end (job_settling.h), which takes one pass at a time. Its life is
/// one typed value: the state its record keeps (active, suspending, suspended, resuming) or one
/// of the two that no record keeps, broken and destroyed; what the sandbox may still do follows
/// from it (CheckUsable). Of the exclusive operation under way it also keeps the live roots
/// that operation opened and its progress. No mounts, paths or change sets here (sandbox.h).

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sandbox/operation_progress.h"
#include "store/sandbox_state.h"
#include "unique_fd.h"

namespace sandboxd {

/// Where a sandbox is in its life: a state its record keeps, or broken (a commit could neither
/// finish nor be taken back: its journal entry waits for the next start-up, and until then the
/// sandbox runs nothing and is not changed, for a discard or destroy would throw away the live
/// entries the commit set aside) or destroyed (every call is refused from then on).
enum class SandboxLife { kActive, kSuspending, kSuspended, kResuming, kBroken, kDestroyed };

/// The API's name: the SandboxState's ("active", "suspended"...), "broken", "destroyed".
std::string_view ToString(SandboxLife life);

class SandboxGate {
 public:
  /// `id` names the sandbox in refusals.
  SandboxGate(std::string id, SandboxState state) : id_(std::move(id)), state_(state) {}
  SandboxGate(const SandboxGate&) = delete;
  SandboxGate& operator=(const SandboxGate&) = delete;

  // --- Its life ---
  SandboxLife life() const;
  /// The state its record keeps (suspension.h moves it; the caller records it in the store first).
  SandboxState state() const;
  void SetState(SandboxState state);
  bool active() const { return state() == SandboxState::kActive; }
  void MarkBroken(const std::string& why);
  bool broken() const;
  /// Called by destroy while it holds the gate: from then on every job and operation is
  /// refused, while the overlay is taken down after the caller has had its answer.
  void MarkDestroyed();
  bool destroyed() const;
  /// Throws Error(kInvalidState) unless the sandbox is active, naming `verb` ("read the changes
  /// of"...); Error(kNotFound) once destroyed; Error(kInvalidState) while broken.
  void CheckActive(const std::string& verb) const;
  /// When a job last started or ended or an exclusive operation ended (0: not since the start).
  int64_t last_used_usec() const;

  // --- Jobs ---
  /// Counts a job in; returns when it started (FileClockFineNowNs): its command must not run
  /// before the file clock is past it (JobLaunch::start_mark). Refused when the sandbox is not
  /// active, or busy with an exclusive operation (Error(kBusy)).
  int64_t BeginJob();
  /// Counts it out (`started`: what BeginJob returned); returns the earliest start of it and of
  /// the jobs still running: a live change from then on may have come after one of them read
  /// the file (live_sight.h). With `settle`, the job's end is then taken in (scan, sights,
  /// count) off its caller's time, and the sandbox is settling until SettleDone(): exclusive
  /// operations and readers of sights (WaitSettled) wait for that, so they never act on a
  /// change set whose sights are not recorded yet.
  int64_t EndJob(int64_t started, bool settle = false);
  /// `jobs` ended jobs' ends are taken in (or given up on).
  void SettleDone(unsigned jobs = 1);
  unsigned running_jobs() const;
  /// Running jobs and ended ones whose end is still being taken in: work that keeps the daemon
  /// from going idle.
  unsigned jobs_in_progress() const;

  // --- Settling ---
  /// One settling runs at a time per sandbox, taking in the ends of every job that ended
  /// before it began: jobs ending while a scan of a million changes runs would otherwise each
  /// start one of their own, and scans pile up faster than they end. QueueSettle queues the
  /// end of a job (`unseen_from`: what EndJob returned) and is true when the caller is to run
  /// the settling: then it takes passes (NextSettlePass) until there is none, each covering the
  /// ends queued before it (the earliest `unseen_from` of them) and ended with
  /// SettlePassDone(pass). False: the settling under way takes this end in.
  struct SettlePass {
    int64_t unseen_from_ns = 0;
    unsigned jobs = 0;
  };
  bool QueueSettle(int64_t unseen_from_ns);
  std::optional<SettlePass> NextSettlePass();
  /// The pass under way has stored the sights of every change up to `through` (a change set's
  /// stream order: byte order of {root, path}, changeset_scanner.h).
  void SettledThrough(const std::pair<size_t, std::string>& through);
  /// The pass has taken its jobs' ends in (or given up on them).
  void SettlePassDone(const SettlePass& pass);
  /// Every change whose upper entry last changed before this moment (ns, the file clock) has
  /// had its sight recorded, by a settling this daemon saw through: a later settling need not
  /// look at those again. 0 (nothing known) when the sandbox is loaded: a daemon killed in the
  /// middle of a settling left some without.
  int64_t SightedBeforeNs() const;
  /// After a settling that recorded the sights of every change it was handed: changes whose
  /// upper entry last changed before `ns` (the earliest start of the jobs running when it began)
  /// were final when it scanned them.
  void SightsRecordedBefore(int64_t ns);
  /// Returns once no job's end is being taken in; Error(kBusy) naming `verb` if that takes
  /// more than 10 minutes.
  void WaitSettled(const std::string& verb) const;
  /// Returns once the sights of every change up to `key` (stream order) are stored: no job's
  /// end is being taken in, or only the pass under way is, and it has passed `key`. A listing
  /// reads its conflicts a page at a time behind the settling of the job that just ended,
  /// rather than after all of it. Error(kBusy) as WaitSettled.
  void WaitSettledThrough(const std::pair<size_t, std::string>& key, const std::string& verb) const;

  // --- The exclusive operation ---
  /// Waits as WaitSettled, then holds the gate alone; refused (Error(kBusy)) beside a job or
  /// another operation, and as CheckUsable says for `verb`. Once it holds the gate, what follows
  /// the layers between jobs (SetBeforeExclusive) lets go of them.
  void BeginExclusive(const std::string& verb);
  /// Called by BeginExclusive (without the gate held) before the operation changes the layers:
  /// the change feed kept between jobs (change_feed.h) lets go of what it watches.
  void SetBeforeExclusive(std::function<void()> hook);
  /// `failed`: left by an exception (the progress's last report says so).
  void EndExclusive(bool failed = false);
  /// Of the exclusive operation under way, root `root`'s live directory as it first opened it
  /// (Sandbox::OpenLiveRoot): none yet, or no operation under way.
  std::optional<UniqueFd> OperationRoot(size_t root) const;
  /// Keeps `opened` as root `root`'s live directory for the operation under way, unless it has
  /// one already, and returns the one kept (a duplicate); with no operation under way, returns
  /// `opened` itself.
  UniqueFd KeepOperationRoot(size_t root, UniqueFd opened) const;
  /// Where the progress of its long operations (commit, undo, suspend, resume) goes
  /// (operation_progress.h); none: nowhere. Set by the sandbox's face while it is published.
  void SetProgressSink(ProgressSink sink);
  /// The figures of the exclusive operation under way, from its own thread (or one it waits
  /// for); nothing when it reports no progress.
  void ReportProgress(const ProgressFigures& figures) const;
  void AdvanceProgress(uint64_t entries, uint64_t bytes = 0) const;

 private:
  /// With mutex_ held: refuses `verb` where the sandbox's life does not allow it ("resume" and
  /// "destroy"/"collect" are what a suspended sandbox allows, "resume" only that).
  void CheckUsable(const std::string& verb) const;
  /// WaitSettled with mutex_ held by `lock` (released while waiting); WaitSettledThrough
  /// `through` when given.
  void WaitSettledLocked(std::unique_lock<std::mutex>& lock, const std::string& verb,
                         const std::pair<size_t, std::string>* through = nullptr) const;

  const std::string id_;
  mutable std::mutex mutex_;
  /// Signalled when settling_ drops, and when the pass under way moves on.
  mutable std::condition_variable settled_;
  SandboxState state_;
  bool destroyed_ = false;
  std::string broken_;  ///< why, when it is
  unsigned running_jobs_ = 0;
  std::multiset<int64_t> job_starts_;  ///< of the running jobs
  unsigned settling_ = 0;              ///< ended jobs whose end is being taken in
  int64_t sighted_before_ns_ = 0;      ///< SightedBeforeNs
  bool settle_running_ = false;        ///< a thread takes passes (QueueSettle)
  SettlePass queued_settle_;           ///< job ends queued for the next pass
  unsigned passing_jobs_ = 0;          ///< job ends the pass under way takes in
  std::optional<std::pair<size_t, std::string>> settled_through_;  ///< SettledThrough, of the pass under way
  int64_t last_used_usec_ = 0;
  bool exclusive_ = false;
  std::function<void()> before_exclusive_;
  /// The live roots the exclusive operation under way has opened, by root (kept by readers
  /// of the sandbox too: the openings, not the gate, change).
  mutable std::vector<UniqueFd> operation_roots_;
  ProgressSink progress_sink_;
  /// Of the exclusive operation under way, when it is one that reports progress.
  std::unique_ptr<OperationProgress> progress_;
};

/// RAII for SandboxGate::BeginExclusive/EndExclusive.
class ExclusiveOperation {
 public:
  ExclusiveOperation(SandboxGate& gate, const std::string& verb) : gate_(gate) { gate_.BeginExclusive(verb); }
  ~ExclusiveOperation() { gate_.EndExclusive(std::uncaught_exceptions() > unwinding_); }
  ExclusiveOperation(const ExclusiveOperation&) = delete;
  ExclusiveOperation& operator=(const ExclusiveOperation&) = delete;

 private:
  SandboxGate& gate_;
  const int unwinding_ = std::uncaught_exceptions();  ///< exceptions in flight before it
};

}  // namespace sandboxd
