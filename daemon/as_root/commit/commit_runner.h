#pragma once
/// The daemon's side of a crash-safe commit. Plans the steps (commit_planner.h), writes them to
/// the journal before anything moves, has sandboxd-helper carry them out as the owner, and then
/// keeps what the commit replaced or removed as its backups. If a step fails, every step done
/// is taken back and the live tree is as before. If the daemon dies half-way, Recover (at
/// start-up, before the sandbox is mounted again) finishes the commit from its journal, or takes
/// it back when it cannot be finished: the live tree ends wholly before or wholly after it.
/// A commit of the whole change set works on the upper layer itself, which then becomes the
/// backups; a partial one goes through a stage (commit_stage.h) and leaves the rest in the upper,
/// and so does every commit to a root whose layers are on another file system, whose stage is
/// then copied onto the root's own file system first (landing_area.h).
/// No D-Bus here; the sandbox must be unmounted and held exclusively by the caller.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"
#include "commit/commit_journal.h"
#include "commit/commit_planner.h"
#include "commit/commit_request.h"
#include "commit/landing_area.h"
#include "sandbox/layout.h"
#include "sandbox/live_sight.h"
#include "sandbox/sandbox.h"
#include "helper_clients/owner_helpers.h"

namespace sandboxd {

class CommitRunner {
 public:
  /// The roots of a sandbox opened for one commit.
  struct RootFds {
    std::vector<UniqueFd> lives, uppers;
    std::vector<int> live_fds, upper_fds;
    std::vector<std::string> prefixes;
    std::vector<bool> landing;  ///< root i's layers are on another file system (landing_area.h)
    bool any_landing = false;
  };

  CommitRunner(const Layout& layout, CommitJournal& journal, SightStore& sights, OwnerHelpers& helpers);

  struct Outcome {
    size_t committed = 0;
    /// For the caller: "skipped P: ..." lines, and any landing area that could not be removed.
    std::vector<std::string> skipped;
    InodesByRoot worked;  ///< the live inodes it took a name from (InodesNamedBy)
  };
  /// Told the commit's journal id once it is journaled, before anything moves.
  using Journaled = std::function<void(int64_t commit)>;
  /// Commits what `request` names, all or nothing. Refuses with Error(kConflict) listing every
  /// path whose live entry changed since the sandbox last agreed with it, unless forced.
  /// Throws Error naming the path. The sandbox must be unmounted, and `request` made from what
  /// its upper held after that (so that "everything" in the request is everything there).
  /// `taken_back`, when given, hears the live inodes the steps work on (Outcome::worked) before
  /// they run: a commit that fails then was taken back over them.
  Outcome Commit(Sandbox& sandbox, const CommitRequest& request, const Journaled& journaled = {},
                 InodesByRoot* taken_back = nullptr);
  /// When the sandbox last agreed with the live tree: its creation or its last commit's end
  /// (what a change without a sight is compared with; live_sight.h).
  int64_t AgreedUsec(const SandboxReader& sandbox);
  struct UndoOutcome {
    int64_t commit = 0;
    size_t steps = 0;
    std::vector<std::string> notes;  ///< lines for the log (a landing area left behind)
    InodesByRoot worked;             ///< the live inodes it gave a name back to (InodesNamedBy)
  };
  /// Takes the sandbox's last commit back: the live tree is as before it, from its backups, and
  /// what it committed is in the sandbox again (files, symlinks, fifos and deletions; where the
  /// sandbox has changed a path since, its newer version stays). Refuses with Error(kConflict)
  /// naming every path the owner changed since that commit, and with kNotFound when there is
  /// no commit to undo. All or nothing, like a commit.
  UndoOutcome Undo(Sandbox& sandbox);
  /// Finishes or takes back the sandbox's unfinished commits and undos; returns a line for the
  /// log each.
  std::vector<std::string> Recover(Sandbox& sandbox);

  /// Whether a commit of the whole change set can make the upper itself its backups: every
  /// root's layers are on its live file system.
  static bool TakesWholeUpper(const Sandbox& sandbox);

 private:
  static RootFds OpenRoots(const Sandbox& sandbox);

  /// A commit of the whole change set, read from the upper a page at a time (never held whole):
  /// each page checked for conflicts (unless forced) and planned, its steps journaled.
  Outcome CommitWholeUpper(Sandbox& sandbox, const CommitRequest& request, const UserCredentials& owner,
                           const Journaled& journaled, InodesByRoot* taken_back);
  /// Plans it and, once no conflict refused it, clears the overlay's marks from what goes live.
  void PlanWholeUpper(const Sandbox& sandbox, int64_t commit, const CommitRequest& request, const UserCredentials& owner,
                      const RootFds& fds, Outcome& outcome);
  /// Whether the upper entry place `step` puts live may carry overlayfs's marks;
  /// `index_covers[i]`: Sandbox::IndexCoversUpper(i).
  static bool MayCarryMarks(const CommitPlanner& planner, const CommitStep& step, const std::vector<bool>& index_covers);
  static std::vector<bool> IndexCovers(const Sandbox& sandbox);
  /// A commit of part of the change set (or of all of it across file systems), streamed from
  /// `request.taken`: a page at a time checked for conflicts and staged, then planned.
  Outcome CommitStaged(Sandbox& sandbox, const CommitRequest& request, const UserCredentials& owner, const Journaled& journaled,
                       InodesByRoot* taken_back);
  /// Stages what `request.taken` takes into `stage_fds` a page at a time, unless a conflict
  /// (unforced) or two names of one file not taken together refuse it; lists it for the plan.
  /// Returns the renames taken.
  TakenRenames StageTaken(const Sandbox& sandbox, int64_t commit, const CommitRequest& request, const UserCredentials& owner,
                          const RootFds& fds, const std::vector<int>& stage_fds, Outcome& outcome);
  /// Plans the staged commit from its list, a page at a time, and journals its steps.
  void PlanStaged(int64_t commit, const Sandbox& sandbox, const RootFds& fds, const std::vector<int>& stage_fds,
                  const TakenRenames& renames, Outcome& outcome);
  void PrepareDirectories(const Sandbox& sandbox, int64_t commit, bool staged);
  /// Once the journaled steps of `commit` have gone live (a commit) or come back (an undo), a
  /// page at a time, before the journal says
  /// so: the sandbox has seen the live tree at their paths as it is now (live_sight.h), and its
  /// directories there forget origins the live tree no longer has (stale_origins.h). Done here,
  /// not by the caller, so that recovery after a kill does it too. `upper_kept` is false after
  /// a commit of the whole upper, which leaves none. Returns a note on failure.
  /// `others`: CurrentSightsOf the steps' inodes from just before they ran (none in recovery:
  /// what was current then is unknown, so the other names keep their sights).
  std::optional<std::string> SettleAfterMoves(const Sandbox& sandbox, int64_t commit, bool upper_kept,
                                              const Sights& others = {});
  /// InodesNamedBy the journaled steps of `commit`.
  InodesByRoot InodesNamedByCommit(int64_t commit);
  /// Runs the journaled steps of `commit`; a staged commit's new entries (and backups) are in
  /// its stage.
  void Run(const Sandbox& sandbox, int64_t commit, StepDirection direction, bool staged);
  /// Removes commit `commit`'s areas (backups, stage) from every storage directory.
  void RemoveCommitDirs(const Sandbox& sandbox, int64_t commit);
  /// Gives the entries of the upper the overlay marks `commit` took off them and noted
  /// (overlay_marks.h), once it is taken back. Throws Error.
  void GiveBackMarks(const Sandbox& sandbox, int64_t commit);
  /// Forgets a commit still being planned, which moved nothing: the marks it took go back, its
  /// area and its journal rows go. Throws only where the journal cannot be written.
  void AbandonPlanned(const Sandbox& sandbox, int64_t commit);
  /// After a commit that failed was taken back: each of `current` (CurrentSightsOf the steps'
  /// inodes from just before they ran) still in sight, whose live entry is the same inode, is in
  /// sight as it is now (ResightOtherNames: its ctime moved with the sandbox's own work). Never
  /// throws: sights left as they were only make conflicts.
  void ResightAfterTakingBack(const Sandbox& sandbox, const Sights& current);
  /// Puts a staged commit's entries back into the upper and forgets the commit. Returns lines
  /// for the log (RemoveLandings).
  std::vector<std::string> Unstage(const Sandbox& sandbox, int64_t commit);
  /// After an undo took the steps back: the commit's entries go back into the sandbox's upper,
  /// the commit's directory goes, and it is "undone". Returns lines for the log.
  std::vector<std::string> ReturnToSandbox(const Sandbox& sandbox, int64_t commit, const Sights& others = {});
  /// Root `root`'s landing area for `commit` (landing_area.h); `live_fd` must outlive it.
  LandingArea Landing(const Sandbox& sandbox, int64_t commit, size_t root, int live_fd) const;
  /// Runs `work` on the commit's landing area of each root whose layers are on another file
  /// system (its live root open for as long as `work` runs).
  void ForEachLanding(const Sandbox& sandbox, int64_t commit,
                      const std::function<void(size_t root, const LandingArea& landing)>& work) const;
  /// Removes the commit's landing areas (roots whose layers are on another file system);
  /// returns a line for each that could not be removed wholly.
  std::vector<std::string> RemoveLandings(const Sandbox& sandbox, int64_t commit);
  /// For an undo: the commit's backups copied back onto each landing root's file system, and
  /// `steps` rebased on the copies (RebaseOnImportedBackups).
  std::vector<CommitStep> ImportBackups(const Sandbox& sandbox, int64_t commit, std::vector<CommitStep> steps);
  /// After a commit through landing areas is applied: the backups there go into the commit's
  /// area in the state directory, and the landing areas go. Idempotent.
  std::vector<std::string> KeepLandedBackups(const Sandbox& sandbox, int64_t commit);
  /// After a staged commit went live: see SettleUpperAfterCommit. Reads the steps from the
  /// journal, a page at a time.
  void Settle(const Sandbox& sandbox, int64_t commit);
  /// Moves each root's upper layer (now holding the replaced entries) into the commit's
  /// backups and empties the work dir; SetUp makes fresh ones. Idempotent.
  void KeepBackups(const Sandbox& sandbox, int64_t commit);

  const Layout& layout_;
  CommitJournal& journal_;
  SightStore& sights_;
  OwnerHelpers& helpers_;
};

}  // namespace sandboxd
