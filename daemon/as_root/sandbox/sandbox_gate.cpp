#include "sandbox/sandbox_gate.h"

#include <fcntl.h>

#include <algorithm>
#include <chrono>

#include "base/errors.h"
#include "runtime/clock.h"
#include "runtime/file_clock.h"

namespace sandboxd {

namespace {

/// How long an operation waits for the end of a job to be taken in (a scan of the change set:
/// seconds at a million changes) before it gives up.
constexpr auto kSettleWait = std::chrono::minutes(10);

UniqueFd Duplicate(const UniqueFd& fd) {
  UniqueFd copy(fcntl(fd.get(), F_DUPFD_CLOEXEC, 3));
  if (!copy) ThrowErrno("cannot duplicate a descriptor");
  return copy;
}

}  // namespace

std::string_view ToString(SandboxLife life) {
  switch (life) {
    case SandboxLife::kActive: return ToString(SandboxState::kActive);
    case SandboxLife::kSuspending: return ToString(SandboxState::kSuspending);
    case SandboxLife::kSuspended: return ToString(SandboxState::kSuspended);
    case SandboxLife::kResuming: return ToString(SandboxState::kResuming);
    case SandboxLife::kBroken: return "broken";
    case SandboxLife::kDestroyed: return "destroyed";
  }
  return "unknown";
}

SandboxLife SandboxGate::life() const {
  std::lock_guard lock(mutex_);
  if (destroyed_) return SandboxLife::kDestroyed;
  if (!broken_.empty()) return SandboxLife::kBroken;
  switch (state_) {
    case SandboxState::kActive: return SandboxLife::kActive;
    case SandboxState::kSuspending: return SandboxLife::kSuspending;
    case SandboxState::kSuspended: return SandboxLife::kSuspended;
    case SandboxState::kResuming: return SandboxLife::kResuming;
  }
  return SandboxLife::kBroken;
}

SandboxState SandboxGate::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

void SandboxGate::SetState(SandboxState state) {
  std::lock_guard lock(mutex_);
  state_ = state;
}

void SandboxGate::MarkBroken(const std::string& why) {
  std::lock_guard lock(mutex_);
  broken_ = why;
}

bool SandboxGate::broken() const {
  std::lock_guard lock(mutex_);
  return !broken_.empty();
}

void SandboxGate::MarkDestroyed() {
  std::lock_guard lock(mutex_);
  destroyed_ = true;
}

bool SandboxGate::destroyed() const {
  std::lock_guard lock(mutex_);
  return destroyed_;
}

void SandboxGate::CheckActive(const std::string& verb) const {
  std::lock_guard lock(mutex_);
  CheckUsable(verb);
}

void SandboxGate::CheckUsable(const std::string& verb) const {
  if (destroyed_) throw Error(Code::kNotFound, "sandbox " + id_ + " has been destroyed");
  if (!broken_.empty()) throw Error(Code::kInvalidState, "sandbox " + id_ + " cannot be used: " + broken_);
  bool active = state_ == SandboxState::kActive;
  if (verb == "destroy" || verb == "collect") return;  // a suspended sandbox may go
  if (verb == "resume") {
    if (active) throw Error(Code::kInvalidState, "sandbox " + id_ + " is not suspended; there is nothing to resume");
    return;
  }
  if (!active && verb == "suspend") throw Error(Code::kInvalidState, "sandbox " + id_ + " is already " + std::string(ToString(state_)));
  if (!active)
    throw Error(Code::kInvalidState, "sandbox " + id_ + " is " + std::string(ToString(state_)) + "; resume it before you " + verb + " it");
}

int64_t SandboxGate::last_used_usec() const {
  std::lock_guard lock(mutex_);
  return last_used_usec_;
}

int64_t SandboxGate::BeginJob() {
  // Without waiting for the file clock's next tick (up to 4 ms on every run): the job's command
  // waits for it instead, once bwrap has set up, which as a rule took longer (job.h).
  int64_t started = FileClockFineNowNs();
  std::lock_guard lock(mutex_);
  CheckUsable("run a job in");
  last_used_usec_ = TheSystemClock().NowUsec();
  if (exclusive_) throw Error(Code::kBusy, "sandbox " + id_ + " is busy committing, discarding or being destroyed");
  ++running_jobs_;
  job_starts_.insert(started);
  return started;
}

int64_t SandboxGate::EndJob(int64_t started, bool settle) {
  std::lock_guard lock(mutex_);
  --running_jobs_;
  // In the same step as the job is counted out: no exclusive operation may slip in between.
  if (settle) ++settling_;
  last_used_usec_ = TheSystemClock().NowUsec();
  if (auto it = job_starts_.find(started); it != job_starts_.end()) job_starts_.erase(it);
  return job_starts_.empty() ? started : std::min(started, *job_starts_.begin());
}

void SandboxGate::SettleDone(unsigned jobs) {
  std::lock_guard lock(mutex_);
  settling_ -= std::min(settling_, jobs);
  settled_.notify_all();  // also to readers behind the pass under way: it may be all that is left
}

unsigned SandboxGate::running_jobs() const {
  std::lock_guard lock(mutex_);
  return running_jobs_;
}

unsigned SandboxGate::jobs_in_progress() const {
  std::lock_guard lock(mutex_);
  return running_jobs_ + settling_;
}

bool SandboxGate::QueueSettle(int64_t unseen_from_ns) {
  std::lock_guard lock(mutex_);
  queued_settle_.unseen_from_ns =
      queued_settle_.jobs == 0 ? unseen_from_ns : std::min(queued_settle_.unseen_from_ns, unseen_from_ns);
  ++queued_settle_.jobs;
  if (settle_running_) return false;
  settle_running_ = true;
  return true;
}

std::optional<SandboxGate::SettlePass> SandboxGate::NextSettlePass() {
  std::lock_guard lock(mutex_);
  if (queued_settle_.jobs == 0) {
    settle_running_ = false;  // in the same step: an end queued from now on starts a settling
    return std::nullopt;
  }
  SettlePass pass = queued_settle_;
  queued_settle_ = {};
  passing_jobs_ = pass.jobs;
  settled_through_.reset();
  return pass;
}

void SandboxGate::SettledThrough(const std::pair<size_t, std::string>& through) {
  std::lock_guard lock(mutex_);
  settled_through_ = through;
  settled_.notify_all();
}

void SandboxGate::SettlePassDone(const SettlePass& pass) {
  std::lock_guard lock(mutex_);
  settling_ -= std::min(settling_, pass.jobs);
  passing_jobs_ = 0;
  settled_through_.reset();
  settled_.notify_all();
}

int64_t SandboxGate::SightedBeforeNs() const {
  std::lock_guard lock(mutex_);
  return sighted_before_ns_;
}

void SandboxGate::SightsRecordedBefore(int64_t ns) {
  std::lock_guard lock(mutex_);
  sighted_before_ns_ = std::max(sighted_before_ns_, ns);
}

void SandboxGate::WaitSettledLocked(std::unique_lock<std::mutex>& lock, const std::string& verb,
                                    const std::pair<size_t, std::string>* through) const {
  // With `through`: jobs ended but not yet in the pass under way are settled by a later pass,
  // from the start, so only the pass under way having passed the key will do.
  auto settled = [&] {
    return settling_ == 0 || (through && settling_ == passing_jobs_ && settled_through_ && *through <= *settled_through_);
  };
  if (!settled_.wait_for(lock, kSettleWait, settled))
    throw Error(Code::kBusy, "sandbox " + id_ + " is still taking in what its last job changed; cannot " + verb + " it now");
}

void SandboxGate::WaitSettled(const std::string& verb) const {
  std::unique_lock lock(mutex_);
  WaitSettledLocked(lock, verb);
}

void SandboxGate::WaitSettledThrough(const std::pair<size_t, std::string>& key, const std::string& verb) const {
  std::unique_lock lock(mutex_);
  WaitSettledLocked(lock, verb, &key);
}

void SandboxGate::BeginExclusive(const std::string& verb) {
  std::unique_lock lock(mutex_);
  WaitSettledLocked(lock, verb);
  CheckUsable(verb);
  if (exclusive_) throw Error(Code::kBusy, "sandbox " + id_ + " is busy with another operation; cannot " + verb + " now");
  if (running_jobs_ > 0)
    throw Error(Code::kBusy, "sandbox " + id_ + " has " + std::to_string(running_jobs_) +
                                 " running job(s); cannot " + verb + " it until they end");
  exclusive_ = true;
  if (progress_sink_ && (verb == "commit" || verb == "undo" || verb == "suspend" || verb == "resume"))
    progress_ = std::make_unique<OperationProgress>(verb, progress_sink_);
  std::function<void()> hook = before_exclusive_;
  lock.unlock();
  if (hook) hook();
}

void SandboxGate::SetBeforeExclusive(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  before_exclusive_ = std::move(hook);
}

void SandboxGate::EndExclusive(bool failed) {
  std::unique_ptr<OperationProgress> progress;
  {
    std::lock_guard lock(mutex_);
    exclusive_ = false;
    operation_roots_.clear();
    last_used_usec_ = TheSystemClock().NowUsec();
    progress = std::move(progress_);
  }
  // Its last report goes out without the gate held (the sink asks the bus who listens).
  if (progress) progress->Finish(failed);
}

std::optional<UniqueFd> SandboxGate::OperationRoot(size_t root) const {
  std::lock_guard lock(mutex_);
  if (root < operation_roots_.size() && operation_roots_[root]) return Duplicate(operation_roots_[root]);
  return std::nullopt;
}

UniqueFd SandboxGate::KeepOperationRoot(size_t root, UniqueFd opened) const {
  std::lock_guard lock(mutex_);
  if (!exclusive_) return opened;
  if (operation_roots_.size() <= root) operation_roots_.resize(root + 1);
  if (!operation_roots_[root]) operation_roots_[root] = std::move(opened);
  return Duplicate(operation_roots_[root]);
}

void SandboxGate::SetProgressSink(ProgressSink sink) {
  std::lock_guard lock(mutex_);
  progress_sink_ = std::move(sink);
}

void SandboxGate::ReportProgress(const ProgressFigures& figures) const {
  if (progress_) progress_->Set(figures);
}

void SandboxGate::AdvanceProgress(uint64_t entries, uint64_t bytes) const {
  if (progress_) progress_->Advance(entries, bytes);
}

}  // namespace sandboxd
