#pragma once
/// A sandbox's review log: what its owner decided, with the notes they left for whoever made
/// the changes (an agent reads them with review_status), and the reviews asked for. In the
/// daemon's SQLite database, so it survives restarts and suspends; it goes with its sandbox
/// (ON DELETE CASCADE) and keeps the last kKeptEntries entries, so that nothing a caller
/// repeats can grow it without end.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace sandboxd {

enum class ReviewAct { kApproved, kRejected, kReviewAsked, kCommitted, kDiscarded };
std::string_view ToString(ReviewAct act);
std::optional<ReviewAct> ReviewActFromString(std::string_view text);

struct ReviewEntry {
  int64_t time_usec = 0;
  ReviewAct act = ReviewAct::kApproved;
  /// What it was about: the selectors decided (as messages name them: "PATH", "PATH:N"), "."
  /// for every change; the count of changes a commit took; nothing for the others.
  std::vector<std::string> what;
  std::string note;  ///< the decision's note, or the message of a review asked for
};

class ReviewLog {
 public:
  /// How long a note or a review's message may be, in bytes.
  static constexpr size_t kMaxNoteBytes = 4096;
  /// How many selectors an entry names at most (the rest are counted: "... and N more").
  static constexpr size_t kMaxWhat = 100;
  /// How many entries a sandbox's log keeps.
  static constexpr size_t kKeptEntries = 1000;

  explicit ReviewLog(Store& store);

  /// Appends `entry` (its `what` cut to kMaxWhat), dropping the oldest past kKeptEntries. A
  /// review asked for while the last one still waits replaces it instead.
  void Add(const std::string& sandbox_id, ReviewEntry entry);
  /// The latest `limit` entries, newest first.
  std::vector<ReviewEntry> Recent(const std::string& sandbox_id, size_t limit);
  /// The latest review asked for, while its owner has not acted since (decided, committed or
  /// discarded): the one still waiting for them.
  std::optional<ReviewEntry> OpenRequest(const std::string& sandbox_id);

 private:
  Store& store_;
};

}  // namespace sandboxd
