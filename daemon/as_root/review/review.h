#pragma once
/// The review of a sandbox's change set: which decisions (approval.h) still hold for the
/// changes as they are now, and turning the owner's selectors into decisions. A selector names a
/// change by the path `changes` shows, every change beneath a directory, or hunk N of a text
/// modification (PATH:N, numbered as `diff` shows them); one that names nothing is refused.
/// No D-Bus here; counting hunks needs the owner's rights and comes in as a function.

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "changes/approval.h"
#include "changes/commit_selection.h"
#include "changes/rename_finder.h"
#include "changes/reviewed_change.h"
#include "commit/commit_journal.h"
#include "commit/commit_request.h"
#include "review/approval_store.h"
#include "review/decision_pins.h"
#include "review/fingerprint.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"
#include "selector.h"

namespace sandboxd {

/// What a commit would take, learnt in one pass over the change set without holding it: enough
/// to ask about it and to know whether it is the whole change set (which then streams from the
/// upper, CommitRunner) or a part (which streams from the review: Review::StreamTaken).
struct CommitOutlook {
  size_t changes = 0;          ///< in the change set (what the question to polkit names)
  size_t taken = 0;            ///< of them the commit takes (new directories taken along aside)
  bool everything = false;     ///< every change is taken, whole
  bool uncommittable = false;  ///< a socket or device node is among them (IsCommittable)
  /// {root, added path} → deleted path, of every rename (both halves taken when `everything`).
  std::map<std::pair<size_t, std::string>, std::string> renames;
};

/// Learns a CommitOutlook from the reviewed change set fed in scan order; what it holds grows
/// with the renames only. See Review::Outlook.
class OutlookTally {
 public:
  OutlookTally(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending);
  void Add(ReviewedChange item);
  /// Throws Error(kNotFound) naming a selector that named nothing.
  CommitOutlook Finish();

 private:
  const SandboxReader& sandbox_;
  const std::vector<api::Selector>& selectors_;
  api::SelectorIndex index_;
  std::vector<bool> used_;
  bool approve_pending_;
  bool all_taken_whole_ = true;
  /// A rename half no selector names is named through its partner (as Selection names it):
  /// whether it is is known once the stream is over.
  std::set<std::pair<size_t, std::string>> named_halves_, partners_needed_;
  CommitOutlook outlook_;
};

/// Shapes of text modifications, keyed by {root, path}.
using HunkCounts = std::map<std::pair<size_t, std::string>, HunkShape>;
/// Counts the hunks of changes as the owner; `with_parts`: their parts too.
using HunkCounter = std::function<HunkCounts(const std::vector<RootChanges>& changes, bool with_parts)>;
/// How many parts each hunk of the diff has that would be left of change `change` of root
/// `root` once `pick` of it went live (what a partial commit leaves), as the owner.
using ShapeLeft = std::function<std::vector<int>(size_t root, const Change& change, const HunkPick& pick)>;
/// Digests of the upper files at `paths` of root `root` (helpers/content_digest.h), in order, as
/// the owner: what a decision made while a job runs is bound to (Approval::content).
using ContentDigester = std::function<std::vector<std::string>(size_t root, const std::vector<std::string>& paths)>;
/// Finding renames needs the owner's rights too (rename_finder.h).
using RenameLookup = std::function<SandboxRenames(const SandboxReader&, const std::vector<RootChanges>&)>;

class Review {
 public:
  explicit Review(ApprovalStore& store, RenameLookup find_renames = {})
      : store_(store), find_renames_(std::move(find_renames)) {}

  /// The change set with the decisions that still hold and its renames, in scan order.
  std::vector<ReviewedChange> Current(const SandboxReader& sandbox);
  /// The same one change at a time, without holding the change set: what it holds grows with
  /// the deletions (rename candidates) and the additions of their sizes, never with the rest.
  /// `moving`: the decisions were just pinned for a move (PinBeforeMoves), as a commit does
  /// before it stages: a decision pinned so holds while what it pinned does.
  void ForEach(const SandboxReader& sandbox, const std::function<void(ReviewedChange&&)>& visit, bool moving = false);
  /// Decides `verdict` for what `selectors` name (every change when `all`). Returns how many
  /// changes or hunks were decided. Throws Error(kNotFound) naming a selector that names nothing.
  /// `bind` (given while a job of the sandbox runs): each decision is bound to its content's
  /// digest as it is now (Approval::content); without it, made on the fingerprint alone.
  size_t Decide(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool all, Verdict verdict,
                const HunkCounter& count_hunks, const ContentDigester& bind = {});
  /// Checks the decisions bound to content against the content now: one whose bytes differ
  /// lapses (the change is pending again), whatever its time stamps say; with `unbind` (no job
  /// of the sandbox runs, so no mapping of one can write any more) one that holds is made on
  /// its fingerprint alone from then on. Returns how many lapsed.
  size_t CheckBound(const SandboxReader& sandbox, const ContentDigester& digest, bool unbind);
  ApprovalStore& store() { return store_; }

  /// What a commit of the approved changes `selectors` name (all without) would take;
  /// `approve_pending` as commit --all (ApprovePending). A selector naming nothing is refused,
  /// as Selection refuses it.
  CommitOutlook Outlook(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending);

  /// What a commit of the approved changes takes: approved changes whole, partly approved text
  /// files by hunk, and the new directories an approved change needs to exist in (a directory
  /// the owner rejected is refused), with its renames. Throws Error naming the path.
  /// With `selectors` (PATH: a change or every change beneath a directory), only the approved
  /// changes they name; a selector that names no change is refused.
  /// `approve_pending`: as commit --all, what they name that is pending is approved first.
  static CommitSelection Selection(const SandboxReader& sandbox, const std::vector<ReviewedChange>& reviewed,
                                   const std::vector<api::Selector>& selectors = {}, bool approve_pending = false);
  /// For commit `commit` of part of the change set (CommitRequest::taken), once PinBeforeMoves
  /// pinned the decisions: streams what it takes
  /// of what `selectors` name (all without; `approve_pending` as commit --all) to `take`, and
  /// returns the renames taken. The decisions a partly committed file keeps if it goes live
  /// (those of the hunks left, renumbered: ApprovalLeft, with `shape_left` asked when a hunk
  /// was taken in part) then wait for its outcome in the store. Throws Error as
  /// SelectionStream does.
  TakenRenames StreamTaken(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending, int64_t commit,
                           const std::function<void(TakenChange&&)>& take, const ShapeLeft& shape_left = {});
  /// After commit `commit` went live: forgets decisions of what went live whole (all of them
  /// after a commit of the whole upper; else what its journaled steps name), and gives the
  /// partly committed files the decisions that waited for it.
  void AfterCommit(const SandboxReader& sandbox, int64_t commit, bool whole_upper, CommitJournal& journal);
  /// Settles the decisions waiting for commits of the sandbox that are over (one refused,
  /// failed, or cut off and settled by recovery): kept if it went live, dropped if not.
  void SettleAwaitedCommits(const SandboxReader& sandbox, CommitJournal& journal);
  /// Around a commit, which moves upper entries (decision_pins.h): before it, each decision that
  /// holds is pinned to what a move keeps; after it (done, refused or taken back), to the
  /// entries as they then are.
  void PinBeforeMoves(const SandboxReader& sandbox) { PinDecisionsForMove(store_, sandbox); }
  void PinAfterMoves(const SandboxReader& sandbox, const InodesByRoot& worked = {}) { PinDecisionsToLayers(store_, sandbox, worked); }

 private:
  /// Takes the decisions waiting for `commit`, and keeps them (pinned to the files as they are
  /// now) if it went live.
  void Settle(const SandboxReader& sandbox, int64_t commit, bool went_live);
  /// Pairs the halves of each rename in `reviewed`.
  /// The renames among root by root `deletions` (Sandbox::PrepareStream) and the additions of
  /// files and symlinks of their sizes.
  SandboxRenames StreamedRenames(const SandboxReader& sandbox, const std::vector<RootChanges>& deletions);

  ApprovalStore& store_;
  RenameLookup find_renames_;
};

}  // namespace sandboxd
