#pragma once
/// What the owner decided about the changes of a sandbox: each change approved or rejected as a
/// whole, or hunk by hunk for a text modification. A decision holds only for the content it
/// was made on: it carries a fingerprint of the change (both sides' inode, size and times), and
/// once the change differs (a later job wrote the file, the live file moved on) the decision no
/// longer applies and the change is pending again. Pure logic; persisted by ApprovalStore.

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace sandboxd {

enum class Verdict { kPending, kApproved, kRejected };

/// How `changes` shows a change: pending, approved, rejected, or partial (some hunks approved,
/// others not).
enum class ReviewState { kPending, kApproved, kRejected, kPartial };

std::string_view ToString(Verdict verdict);
std::optional<Verdict> VerdictFromString(std::string_view text);
std::string_view ToString(ReviewState state);

struct Approval {
  size_t root = 0;
  std::string path;                 ///< relative to its root, as in Change::path
  std::string fingerprint;          ///< of the change when decided
  Verdict whole = Verdict::kPending;  ///< the decision when `hunks` is empty
  std::map<int, Verdict> hunks;     ///< per hunk (1-based), for a change decided hunk by hunk
  int hunk_count = 0;               ///< hunks the change had when decided hunk by hunk
  /// The other half of the rename this change was half of when decided ("" for none): a
  /// decision about "renamed a -> b" is not one about "deleted a" or "added b" (README).
  std::string partner;

  /// Decides the whole change (drops any per-hunk decisions).
  void DecideWhole(Verdict verdict);
  /// Decides hunk `hunk` of `count`; a whole decision taken before is spread over every hunk
  /// first. Collapses to a whole decision when all hunks agree.
  void DecideHunk(int hunk, int count, Verdict verdict);

  ReviewState State() const;
  /// The hunks to commit for a change decided hunk by hunk (empty when none or not per hunk).
  std::set<int> ApprovedHunks() const;
  std::set<int> HunksWith(Verdict verdict) const;
  bool CommitsWhole() const { return hunks.empty() && whole == Verdict::kApproved; }
  bool CommitsPart() const { return !ApprovedHunks().empty(); }
  /// Whether a commit takes the change whole: approved whole, or every hunk approved.
  bool CommitsAll() const { return CommitsWhole() || (CommitsPart() && hunks.size() == ApprovedHunks().size()); }
  /// As commit --all decides before it commits: a pending change approved, and the pending
  /// hunks of a partly decided one (rejected ones stay rejected).
  void ApprovePending();
};

/// The decisions of the hunks left after a partial commit that took `committed`: the remaining
/// hunks keep their order, so hunk k of what is left is the k-th hunk not committed.
std::map<int, Verdict> RemainingHunks(const Approval& before, const std::set<int>& committed);

}  // namespace sandboxd
