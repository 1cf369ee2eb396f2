#pragma once
/// The commit journal, in the daemon's SQLite database: every commit's steps are written in one
/// transaction before the first file moves, and its state afterwards, so that a daemon killed at
/// any instant finds at start-up what each unfinished commit was doing and finishes it or takes
/// it back (CommitRunner). States: applying → applied → done, or applying → rolled-back.

#include <cstdint>
#include <string>
#include <vector>

#include "commit_step.h"
#include "store.h"

namespace sandboxd {

struct JournaledCommit {
  int64_t id = 0;
  std::string sandbox_id;
  std::string state;
  std::vector<CommitStep> steps;
};

class CommitJournal {
 public:
  explicit CommitJournal(Store& store);

  /// Records a new commit in state "applying" with all its steps; returns its id.
  int64_t Begin(const std::string& sandbox_id, const std::vector<CommitStep>& steps);
  void SetState(int64_t id, const std::string& state);
  /// The sandbox's commits that are neither done nor rolled back, oldest first, with steps.
  std::vector<JournaledCommit> Unfinished(const std::string& sandbox_id);

 private:
  Store& store_;
};

}  // namespace sandboxd
