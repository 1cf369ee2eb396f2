#include "sandbox/operation_progress.h"

#include <utility>

namespace sandboxd {

std::string_view ToString(ProgressPhase phase) {
  switch (phase) {
    case ProgressPhase::kNone: return "";
    case ProgressPhase::kPlanning: return "planning";
    case ProgressPhase::kStaging: return "staging";
    case ProgressPhase::kMoving: return "moving";
    case ProgressPhase::kArchiving: return "archiving";
    case ProgressPhase::kRestoring: return "restoring";
    case ProgressPhase::kDone: return "done";
    case ProgressPhase::kFailed: return "failed";
  }
  return "";
}

OperationProgress::OperationProgress(std::string operation, ProgressSink sink, std::chrono::milliseconds period)
    : operation_(std::move(operation)), sink_(std::move(sink)) {
  ticker_.Start(period, [this] { Tick(); });
}

OperationProgress::~OperationProgress() {
  ticker_.Stop();
  ProgressFigures last;
  {
    std::lock_guard lock(mutex_);
    if (!any_sent_) return;
    last = now_;
    last.phase = failed_ ? ProgressPhase::kFailed : ProgressPhase::kDone;
    if (!failed_) {
      // Done is all of it, whatever the last tick had counted.
      if (last.entries_total) last.entries_done = last.entries_total;
      if (last.bytes_total) last.bytes_done = last.bytes_total;
    }
  }
  sink_(operation_, last);
}

void OperationProgress::Set(const ProgressFigures& figures) {
  std::lock_guard lock(mutex_);
  now_ = figures;
}

void OperationProgress::Advance(uint64_t entries, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  now_.entries_done += entries;
  now_.bytes_done += bytes;
}

void OperationProgress::Finish(bool failed) {
  std::lock_guard lock(mutex_);
  failed_ = failed;
}

void OperationProgress::Tick() {
  ProgressFigures figures;
  {
    std::lock_guard lock(mutex_);
    if (now_.phase == ProgressPhase::kNone || (any_sent_ && now_ == sent_)) return;
    figures = sent_ = now_;
    any_sent_ = true;
  }
  sink_(operation_, figures);
}

}  // namespace sandboxd
