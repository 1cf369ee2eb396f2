#pragma once
/// Approvals in the daemon's SQLite database (the same connection as the sandbox records), so
/// that they survive a restart and go with their sandbox (ON DELETE CASCADE).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "changes/approval.h"
#include "store/ordered_lookup.h"
#include "store/store.h"

namespace sandboxd {

class ApprovalStore {
 public:
  explicit ApprovalStore(Store& store);

  std::vector<Approval> Load(const std::string& sandbox_id);
  /// Up to `limit` decisions at or after {root, path} `from`, in that
  /// key order (ordered_lookup.h).
  OrderedLookup<Approval>::Page Page(const std::string& sandbox_id, const RecordKey& from, size_t limit);
  /// The decisions of the sandbox one by one as a streaming scan asks for them.
  OrderedLookup<Approval> Lookup(const std::string& sandbox_id);
  /// Writes `approvals` (replacing earlier rows of the same paths); a pending whole decision
  /// deletes its row. One transaction.
  void Save(const std::string& sandbox_id, const std::vector<Approval>& approvals);
  /// The decisions bound to content (made while a job ran: approval.h), few.
  std::vector<Approval> Bound(const std::string& sandbox_id);
  /// Forgets the decisions of `paths` (after a commit took them).
  void Forget(const std::string& sandbox_id, const std::vector<std::pair<size_t, std::string>>& paths);
  /// Forgets every decision of the sandbox (after a commit of its whole change set); those
  /// waiting for a commit's outcome stay.
  void ForgetAll(const std::string& sandbox_id);
  void Clear(const std::string& sandbox_id);

  /// The decisions the files a commit takes in part keep if it goes live (the hunks left),
  /// written before it moves anything and taken when it is settled: a commit a kill cut off
  /// is settled by recovery, and its outcome is then known only from the journal.
  void SaveAfterCommit(const std::string& sandbox_id, int64_t commit, const std::vector<Approval>& approvals);
  /// Keeps the decisions as they are before commit `commit` moves anything (pinned for the move:
  /// decision_pins.h), for an undo of it.
  void KeepBeforeCommit(const std::string& sandbox_id, int64_t commit);
  /// After commit `commit` was undone, the decisions kept before it come back, pinned as they
  /// were then (Review::PinAfterMoves then pins them to the entries as they are): of `taken`
  /// (paths the commit took, a page at a time) the kept decision replaces what was decided
  /// since (TakeBackKept); then of the others it comes back only where none is (RestoreKept,
  /// which forgets what was kept).
  void TakeBackKept(const std::string& sandbox_id, int64_t commit, const std::vector<RecordKey>& taken);
  void RestoreKept(const std::string& sandbox_id, int64_t commit);
  /// Forgets what was kept for commit `commit` (one that did not go live: nothing to undo).
  void DropKept(const std::string& sandbox_id, int64_t commit);
  /// The commits of the sandbox with decisions waiting for their outcome.
  std::vector<int64_t> CommitsAwaited(const std::string& sandbox_id);
  /// The decisions waiting for commit `commit` (without fingerprints).
  std::vector<Approval> AfterCommitOf(const std::string& sandbox_id, int64_t commit);
  /// Saves `kept` as decisions and forgets those waiting for commit `commit`, in one
  /// transaction: a kill between the two would lose them (the commit is settled, nothing
  /// waits any more) or settle them twice.
  void SettleAfterCommit(const std::string& sandbox_id, int64_t commit, const std::vector<Approval>& kept);

 private:
  Store& store_;
};

}  // namespace sandboxd
