#pragma once
/// How far a long operation on a sandbox (commit, undo, suspend, resume) has come, told to
/// whoever follows it at most once a period (200 ms): the operation's name, its phase, and
/// entries and bytes done of their totals (0 where a phase does not know or count them).
/// The work only updates the figures (cheap, any thread); a ticker of the progress's own
/// sends them when they moved, so a step that takes long (one archive, one page of moves)
/// never makes the work wait for the bus. Nothing is sent for work that ends within a period;
/// work that sent anything ends with one last report, phase done or failed.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "runtime/ticker.h"

namespace sandboxd {

/// The phases of the long operations; their names are the API's (Sandbox.Progress).
enum class ProgressPhase {
  kNone,       ///< not begun: nothing to report
  kPlanning,   ///< a commit's steps being journaled
  kStaging,    ///< a partial commit taking what it commits into its stage
  kMoving,     ///< a commit's or undo's steps being carried out live
  kArchiving,  ///< suspend writing each upper layer's archive
  kRestoring,  ///< resume restoring them
  kDone,       ///< the last report of work that ended well
  kFailed,     ///< the last report of work that failed
};
/// "planning", "moving", ...; "" for kNone.
std::string_view ToString(ProgressPhase phase);

struct ProgressFigures {
  ProgressPhase phase = ProgressPhase::kNone;
  uint64_t entries_done = 0, entries_total = 0;
  uint64_t bytes_done = 0, bytes_total = 0;
  bool operator==(const ProgressFigures&) const = default;
};

/// Receives (operation, figures) on the progress's ticker thread, or on the thread that ends it.
using ProgressSink = std::function<void(const std::string& operation, const ProgressFigures& figures)>;

class OperationProgress {
 public:
  static constexpr std::chrono::milliseconds kPeriod{200};

  OperationProgress(std::string operation, ProgressSink sink, std::chrono::milliseconds period = kPeriod);
  /// Stops the ticker; after any report, sends the last one (Finish's, else "done").
  ~OperationProgress();
  OperationProgress(const OperationProgress&) = delete;
  OperationProgress& operator=(const OperationProgress&) = delete;

  /// The figures as they are now (a new phase starts with its own).
  void Set(const ProgressFigures& figures);
  /// Adds to the current phase's done figures.
  void Advance(uint64_t entries, uint64_t bytes = 0);
  /// How the operation ended: "done" or "failed" (the last report's phase).
  void Finish(bool failed);

 private:
  void Tick();

  const std::string operation_;
  ProgressSink sink_;
  std::mutex mutex_;
  ProgressFigures now_;
  ProgressFigures sent_;
  bool any_sent_ = false;
  bool failed_ = false;
  Ticker ticker_;
};

}  // namespace sandboxd
