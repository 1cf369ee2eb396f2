#pragma once
/// The daemon's side of a crash-safe commit. Plans the steps (commit_planner.h), writes them to
/// the journal before anything moves, has sandboxd-helper carry them out as the owner, and then
/// keeps what the commit replaced or removed as its backups. If a step fails, every step done
/// is taken back and the live tree is as before. If the daemon dies half-way, Recover (at
/// start-up, before the sandbox is mounted again) finishes the commit from its journal, or takes
/// it back when it cannot be finished: the live tree ends wholly before or wholly after it.
/// No D-Bus here; the sandbox must be unmounted and held exclusively by the caller.

#include <cstdint>
#include <string>
#include <vector>

#include "commit_journal.h"
#include "layout.h"
#include "sandbox.h"

namespace sandboxd {

class CommitRunner {
 public:
  CommitRunner(const Layout& layout, CommitJournal& journal, std::string helper_path);

  struct Outcome {
    size_t committed = 0;
    std::vector<std::string> skipped;
  };
  /// Commits every change of the sandbox, all or nothing. Throws Error naming the path.
  Outcome CommitAll(Sandbox& sandbox);
  /// Finishes or takes back the sandbox's unfinished commits; returns a line for the log each.
  std::vector<std::string> Recover(Sandbox& sandbox);

 private:
  void PrepareDirectories(const Sandbox& sandbox, int64_t commit);
  void Run(const Sandbox& sandbox, int64_t commit, const std::string& direction, const std::vector<CommitStep>& steps);
  /// Moves each root's upper layer (now holding the replaced entries) into the commit's
  /// backups and empties the work dir; SetUp makes fresh ones. Idempotent.
  void KeepBackups(const Sandbox& sandbox, int64_t commit);

  const Layout& layout_;
  CommitJournal& journal_;
  std::string helper_path_;
};

}  // namespace sandboxd
