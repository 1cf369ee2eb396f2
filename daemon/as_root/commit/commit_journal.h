#pragma once
/// The commit journal, in the daemon's SQLite database: every commit's steps are written in one
/// transaction before the first file moves, and its state afterwards, so that a daemon killed at
/// any instant finds at start-up what each unfinished commit was doing and finishes it or takes
/// it back (CommitRunner). States: planning or staging → applying → applied → done, or →
/// rolled-back; an undo takes a done commit through [importing →] undoing → returning → undone.
/// A commit of a million changes never holds its steps: they are written and read a page at a
/// time, and until it is "applying" nothing of it has moved live.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "commit/commit_state.h"
#include "commit/undo_check.h"
#include "model/commit_step.h"
#include "store/store.h"

namespace sandboxd {

struct JournaledCommit {
  int64_t id = 0;
  std::string sandbox_id;
  CommitState state = CommitState::kPlanning;
  bool staged = false;  ///< a partial commit: its entries went through a stage (commit_stage.h)
  int64_t finished_usec = 0;
};

/// A commit that went live, as the sandbox's log shows it (sandboxctl log).
struct LoggedCommit {
  int64_t number = 0;  ///< from 1 within its sandbox, in the order they went live
  int64_t id = 0;      ///< the journal's, daemon-wide
  bool undone = false;
  int64_t started_usec = 0;
  int64_t finished_usec = 0;
  uint64_t entries = 0;  ///< the entries it moved live (its steps)
  /// The first entries it moved, {root, path} in the order it moved them (up to the asked many).
  std::vector<std::pair<size_t, std::string>> paths;
};

class CommitJournal {
 public:
  explicit CommitJournal(Store& store);

  /// Records a new commit of the whole upper in state "planning", before anything moves: its
  /// steps are added a page at a time (AppendSteps) and it is applied from SetState(kApplying).
  /// Returns its id. `forced`: it went over conflicts (PutBackSince).
  int64_t BeginPlanning(const std::string& sandbox_id, bool forced);
  /// Forgets a planning commit that will not be applied (refused, failed, or cut off), with its
  /// steps: nothing of it moved.
  void Abandon(int64_t id);
  /// Adds steps to a planning or staging commit, in one transaction.
  void AppendSteps(int64_t id, const std::vector<CommitStep>& steps);
  /// Drops the steps of commit `id`, rolled back: they are of no use any more (a million rows).
  void ForgetSteps(int64_t id);
  /// Hands commit `id`'s steps to `visit` at most `page` at a time, each page in order: the
  /// pages in order, or (`reverse`) from the last to the first (how a commit is taken back).
  void ForEachStepPage(int64_t id, bool reverse, size_t page, const std::function<void(const std::vector<CommitStep>&)>& visit);
  /// How many steps commit `id` has journaled (what its progress counts to).
  uint64_t StepCount(int64_t id);
  /// Records a new partial commit in state "staging", before any entry moves into its stage.
  int64_t BeginStaging(const std::string& sandbox_id, bool forced);
  /// Writes the steps of a staging commit and moves it to "applying", in one transaction.
  void Journal(int64_t id, const std::vector<CommitStep>& steps);
  void SetState(int64_t id, CommitState state);
  /// "done", with the time it finished: the live tree agrees with the sandbox from then on.
  void Finish(int64_t id);
  /// When the sandbox's last commit finished or was undone (microseconds since the epoch): from
  /// then on the live tree agrees with the sandbox. 0 if none did.
  int64_t LastFinishedUsec(const std::string& sandbox_id);
  /// The sandbox's latest commit in state "done" (the one an undo takes back); its steps are
  /// read with ForEachStepPage.
  std::optional<JournaledCommit> LastDone(const std::string& sandbox_id);
  /// Starts an undo whose backups were brought back into landing areas: the steps, rebased on
  /// them (RebaseOnImportedBackups), replace the commit's in the journal, and the state becomes
  /// "undoing", in one transaction.
  void BeginUndo(int64_t id, const std::vector<CommitStep>& steps);
  /// "undone", with the time: the live tree is as before that commit from then on. In the same
  /// transaction, the steps of the sandbox's earlier done commits learn `aliases`, so that
  /// they still recognise the entries they put live.
  void FinishUndo(int64_t id, const std::vector<InodeAlias>& aliases = {});
  /// For undoing commit `id`: the paths the undos of the sandbox's later (undone, unforced)
  /// commits put back, with when (undo_check.h).
  PutBackTimes PutBackSince(const std::string& sandbox_id, int64_t id);
  /// The state of commit `id`, nullopt when there is none.
  std::optional<CommitState> StateOf(int64_t id);
  /// Commit `id`'s steps, held whole (where a page at a time will not do: a commit through
  /// landing areas, which rebases or settles them as one).
  std::vector<CommitStep> StepsOf(int64_t id);
  /// The sandbox's commits that are neither done nor rolled back, oldest first.
  std::vector<JournaledCommit> Unfinished(const std::string& sandbox_id);
  /// The sandbox's commits that went live (done, or undone or being undone since), oldest
  /// first, numbered from 1 within the sandbox, each with up to `max_paths` of its paths.
  std::vector<LoggedCommit> LiveCommits(const std::string& sandbox_id, size_t max_paths);
  /// Commit `id`'s number within its sandbox, as LiveCommits numbers it.
  int64_t NumberOf(const std::string& sandbox_id, int64_t id);

 private:
  static void WriteSteps(Database& db, int64_t id, const std::vector<CommitStep>& steps);
  static CommitStep ReadStep(Statement& select, int64_t commit);
  /// The sandbox's commits matching `condition` (SQL after "WHERE sandbox_id = ? AND").
  /// The sandbox's commits meeting `condition`, whose parameters ?2, ?3... are `states`.
  static std::vector<JournaledCommit> Select(Database& db, const std::string& sandbox_id, const char* condition,
                                             std::initializer_list<CommitState> states);
  static void SetState(Database& db, int64_t id, CommitState state);
  /// Sets a finishing state (done, undone) with the time it finished (FinishedUsec).
  static void SetFinished(Database& db, int64_t id, CommitState state);
  Store& store_;
};

}  // namespace sandboxd
