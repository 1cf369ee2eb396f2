#pragma once
/// What the owner decided about the changes of a sandbox: each change approved or rejected as a
/// whole, or hunk by hunk for a text modification. A decision holds only for the content it
/// was made on: it carries a fingerprint of the change (both sides' inode, size and times), and
/// once the change differs (a later job wrote the file, the live file moved on) the decision no
/// longer applies and the change is pending again. One made while a job ran is bound to the
/// content's digest as well (`content`). Pure logic; persisted by ApprovalStore.

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/hunk_pick.h"

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
  /// Per part, of each hunk decided part by part (git add -p's `s`; hunk_pick.h), as many as the
  /// hunk had parts; such a hunk's entry in `hunks` is kPending and means nothing. Parts that
  /// all agree are no split: the hunk holds their verdict instead.
  std::map<int, std::vector<Verdict>> parts;
  /// The other half of the rename this change was half of when decided ("" for none): a
  /// decision about "renamed a -> b" is not one about "deleted a" or "added b" (docs/security.md).
  std::string partner;
  /// The digest of the sandbox's content of the change (its upper file) when the decision was
  /// made while a job of the sandbox ran, else "". Why: a job that holds a file mapped writable
  /// changes its bytes without a page fault, so without moving the times the fingerprint
  /// names; a decision made then covers exactly the bytes digested, and lapses to pending when
  /// they differ once the job is over (Review::CheckBound), at the latest before a commit.
  std::string content;

  /// Decides the whole change (drops any per-hunk decisions).
  void DecideWhole(Verdict verdict);
  /// Decides hunk `hunk` of `count`; a whole decision taken before is spread over every hunk
  /// first. Collapses to a whole decision when all hunks agree.
  void DecideHunk(int hunk, int count, Verdict verdict);
  /// Decides part `part` of the `part_count` parts of hunk `hunk` of `count`: the hunk's
  /// decision is spread over its parts first (as DecideHunk spreads a whole one over hunks).
  void DecidePart(int hunk, int part, int count, int part_count, Verdict verdict);

  ReviewState State() const;
  /// The hunks decided whole with `verdict`, for a change decided hunk by hunk (split hunks are
  /// in none of them).
  std::set<int> HunksWith(Verdict verdict) const;
  std::set<int> ApprovedHunks() const { return HunksWith(Verdict::kApproved); }
  /// The hunks decided part by part.
  std::set<int> SplitHunks() const;
  /// What a commit takes of a change decided hunk by hunk: the approved hunks and parts.
  HunkPick Approved() const;
  bool CommitsWhole() const { return hunks.empty() && whole == Verdict::kApproved; }
  bool CommitsPart() const { return !Approved().empty(); }
  /// Whether a commit takes the change whole: approved whole, or every hunk approved.
  bool CommitsAll() const {
    return CommitsWhole() || (parts.empty() && CommitsPart() && hunks.size() == ApprovedHunks().size());
  }
  /// As commit --all decides before it commits: a pending change approved, and the pending
  /// hunks and parts of a partly decided one (rejected ones stay rejected).
  void ApprovePending();
  /// Whole again where everything agrees: a split hunk whose parts agree, a change whose hunks do.
  void Collapse();

 private:
  /// Gives every one of `count` hunks the decision the change had, unless it is already decided
  /// hunk by hunk with that many.
  void SpreadOverHunks(int count);
};

/// Whether a partial commit of `taken` leaves a hunk whose parts were taken only in part: what
/// is left of it may show as more than one hunk, so its decisions carry over only with the
/// shape of the diff left (ApprovalLeft).
bool SplitsWhatIsLeft(const Approval& before, const HunkPick& taken);

/// The decision a partly committed change keeps for what is left of it once `taken` went live:
/// the hunks and parts not taken keep their verdicts (rejected stays rejected), renumbered
/// (hunk k of what is left is the k-th hunk not taken whole). `shape_left` (needed when
/// SplitsWhatIsLeft) is how many parts each hunk of the diff left has: the parts left of a
/// hunk split and taken in part are its runs of changed lines, in order, cut into hunks as
/// that diff cuts them. A shape that does not fit what was left (a diff that aligns repeated
/// lines anew) keeps the change rejected whole if anything left was rejected, else pending:
/// never approved.
Approval ApprovalLeft(const Approval& before, const HunkPick& taken, const std::vector<int>* shape_left);

}  // namespace sandboxd
