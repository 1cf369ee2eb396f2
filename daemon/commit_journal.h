#pragma once
/// The commit journal, in the daemon's SQLite database: every commit's steps are written in one
/// transaction before the first file moves, and its state afterwards, so that a daemon killed at
/// any instant finds at start-up what each unfinished commit was doing and finishes it or takes
/// it back (CommitRunner). States: [staging →] applying → applied → done, or → rolled-back; an
/// undo takes a done commit through [importing →] undoing → returning → undone.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commit_step.h"
#include "store.h"
#include "undo_check.h"

namespace sandboxd {

struct JournaledCommit {
  int64_t id = 0;
  std::string sandbox_id;
  std::string state;
  bool staged = false;  ///< a partial commit: its entries went through a stage (commit_stage.h)
  int64_t finished_usec = 0;
  std::vector<CommitStep> steps;
};

class CommitJournal {
 public:
  explicit CommitJournal(Store& store);

  /// Records a new commit in state "applying" with all its steps; returns its id. `forced`: it
  /// went over conflicts (PutBackSince).
  int64_t Begin(const std::string& sandbox_id, const std::vector<CommitStep>& steps, bool forced);
  /// Records a new partial commit in state "staging", before any entry moves into its stage.
  int64_t BeginStaging(const std::string& sandbox_id, bool forced);
  /// Writes the steps of a staging commit and moves it to "applying", in one transaction.
  void Journal(int64_t id, const std::vector<CommitStep>& steps);
  void SetState(int64_t id, const std::string& state);
  /// "done", with the time it finished: the live tree agrees with the sandbox from then on.
  void Finish(int64_t id);
  /// When the sandbox's last commit finished or was undone (microseconds since the epoch): from
  /// then on the live tree agrees with the sandbox. 0 if none did.
  int64_t LastFinishedUsec(const std::string& sandbox_id);
  /// The sandbox's latest commit in state "done" (the one an undo takes back), with its steps.
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
  /// The state of commit `id` ("staging", "applying", "applied", "done", "rolled-back",
  /// "undoing", ...), nullopt when there is none.
  std::optional<std::string> StateOf(int64_t id);
  /// The sandbox's commits that are neither done nor rolled back, oldest first, with steps.
  std::vector<JournaledCommit> Unfinished(const std::string& sandbox_id);

 private:
  static void WriteSteps(Database& db, int64_t id, const std::vector<CommitStep>& steps);
  static void LoadSteps(Database& db, std::vector<JournaledCommit>& commits);
  /// The sandbox's commits matching `condition` (SQL after "WHERE sandbox_id = ? AND"), with steps.
  static std::vector<JournaledCommit> Select(Database& db, const std::string& sandbox_id, const char* condition);
  Store& store_;
};

}  // namespace sandboxd
