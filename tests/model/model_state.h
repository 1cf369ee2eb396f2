#pragma once
/// The model: what DESIGN says must be true of one sandbox and its live tree, updated by each
/// operation the test performs and compared with the real system after each step. It knows
/// nothing of the daemon's code; every rule here is DESIGN's ("Data safety") or docs/security.md's
/// ("Reviewing, conflicts and undo"), and each one the test had to choose says so.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model_hunks.h"
#include "model_tree.h"

namespace sandboxd::model {

/// What the test leaves unchecked while known defects are being fixed: SANDBOXD_MODEL_SKIP is
/// a comma-separated list of these classes. Default: everything is checked.
struct Skips {
  bool conflicts = false;  ///< conflict refusals and marks (issue 17, defects 3 and 4)
  bool marks = false;      ///< only the conflict marks of `changes --json` (3)
  bool hardlinks = false;  ///< hard links: none are made (their changes and inodes, defect 7)
  bool names = false;      ///< git quoting of names in human output (5)
  bool hunkdiff = false;   ///< `diff PATH:N` shows hunk N alone, an unknown N is refused (6)
  bool decisions = false;  ///< decisions compared after suspend/resume (2)
  bool options = false;    ///< create options after a restart (1)
  bool quota = false;      ///< the hard quota probe (8)
  bool nonutf8 = false;    ///< names that are not UTF-8 are never made
  static Skips FromEnv();
  std::string Describe() const;
};

/// The owner's decision about one change. 'p' pending, 'a' approved, 'r' rejected, 'h' hunk by
/// hunk (`hunks`, each 'p', 'a' or 'r'), 'u' unknown: DESIGN does not say (after an undo, or a
/// refused `commit --all`), so any answer is accepted until the test decides it again.
struct Decision {
  char whole = 'p';
  std::vector<char> hunks;
  /// What it was made on (set by Model::Decide): the other half of the rename the change was
  /// half of ("" for none), and the live path's version ("-" when absent). DESIGN/docs/security.md: a
  /// decision holds for the change as it was; once the live file moves on, or the change is
  /// half of another rename (or of none), it is pending.
  std::string partner, live_stamp;
  /// Made while the change was one of several rename candidates (their names, as
  /// ExpectedChange::rename_group; "" when it was not): its partner is the one the daemon
  /// chose, which the model does not know, but the same candidates pair the same way again.
  std::string unsure_group;
  /// The review word `changes --json` must carry ("pending", "approved", "rejected", "partial").
  std::string Review() const;
  std::vector<uint32_t> HunksIn(char state) const;
  bool SameVerdicts(const Decision& other) const { return whole == other.whole && hunks == other.hunks; }
};

struct ExpectedChange {
  std::string path;
  std::string kind;  ///< added, modified, deleted, type-changed, mode-changed
  char type = 'f';   ///< the entry's type in the sandbox (or live, for a deletion)
  bool conflict = false;
  std::string renamed_from, renamed_to;
  bool rename_unsure = false;  ///< several candidates: which pair the daemon makes is its choice
  /// When rename_unsure: every deleted and added path of this entry's type and content, which
  /// the daemon's choice of pairs depends on (another candidate may change it).
  std::string rename_group;
};

class Model {
 public:
  /// The live tree and the sandbox's view of it (what a job sees: the overlay).
  Tree live, view;
  /// Paths the sandbox's upper layer holds (copied up, made or deleted by a job): these no
  /// longer follow the live tree.
  std::set<std::string> touched;
  /// Version of each live path (bumped at every change of it, including by a commit), and the
  /// version each touched path had when a job first copied it up: DESIGN's "what the job saw".
  std::map<std::string, uint64_t> live_version, seen;
  /// Touched paths that were absent live when the job copied them up: absent again is no
  /// conflict (nothing the sandbox did not see is lost).
  std::set<std::string> seen_absent;
  uint64_t clock = 0;
  /// Decisions as made (Decide); what holds now is EffectiveDecisions'.
  std::map<std::string, Decision> decisions;
  /// The sandbox's layers are on a file system of their own (a hard quota): commits go through
  /// a landing area, never by handing the upper over.
  bool layers_elsewhere = false;
  long next_group = 1000;

  struct CommitRecord {
    Tree live_before;
    std::set<std::string> paths;
    std::set<std::string> moved;  ///< of `paths`, both halves of renames that moved a live file
    /// Names the sandbox held unchanged beside a file that went live (linked up), which left it
    /// with the file: name → the committed name of the file.
    std::map<std::string, std::string> left;
    bool whole_upper = false;  ///< the commit took the whole upper as its backups
  };
  /// Commits that undo must be able to take back, newest last. Emptied where the test cannot
  /// tell what undo must do (a live edit or a job on a committed path since).
  std::vector<CommitRecord> undo_stack;

  // ---- A job's acts (the view changes; what it touches stops following the live tree) ----
  void JobWrite(const std::string& path, const std::string& content);  ///< in place if it exists
  void JobAppend(const std::string& path, const std::string& text);
  void JobDelete(const std::string& path);
  void JobRename(const std::string& from, const std::string& to);
  void JobChmod(const std::string& path, unsigned mode);
  void JobSymlink(const std::string& path, const std::string& target);  ///< replaces what is there
  void JobHardlink(const std::string& existing, const std::string& name);

  // ---- The owner's acts on the live tree, between jobs ----
  void LiveWrite(const std::string& path, const std::string& content);  ///< in place if it exists
  void LiveDelete(const std::string& path);
  void LiveChmod(const std::string& path, unsigned mode);

  /// The change set DESIGN defines: every path where the view and the live tree differ.
  std::vector<ExpectedChange> Changes() const;
  std::optional<ExpectedChange> ChangeAt(const std::string& path) const;
  /// Records a decision about `path`, made on the change as it is now.
  void Decide(const std::string& path, Decision decision);
  /// The same, with Changes() as they are now (for many decisions at once).
  void Decide(const std::string& path, Decision decision, const std::vector<ExpectedChange>& changes);
  /// The decision that holds for each of `changes` (Changes()): pending where none does, 'u'
  /// where it depends on a pairing of the daemon's choosing.
  /// The owner decided something: the daemon records the decisions of every change as they
  /// hold now, so one that lapsed (the live file moved on, another rename partner) is gone for
  /// good, even if what it was made on comes back.
  void ForgetLapsed();
  std::map<std::string, Decision> EffectiveDecisions(const std::vector<ExpectedChange>& changes) const;
  Decision EffectiveDecision(const std::string& path) const;
  std::string LiveStamp(const std::string& path) const;
  /// A change of the live tree the sandbox did not see (DESIGN): the live path moved on after
  /// the job that changed it had copied it up.
  bool Conflict(const std::string& path) const;
  /// The names of `path`'s hard-link group in the view (itself alone if none).
  std::vector<std::string> GroupOf(const std::string& path) const;

  struct CommitPlan {
    bool refused = false;
    std::vector<std::string> conflicts;  ///< paths that refuse it (empty when forced)
    std::vector<std::string> split_links;  ///< or two names of one file not taken together
    std::set<std::string> paths;         ///< what goes live, whole or in part
    std::set<std::string> optional_dirs; ///< new empty directories that may or may not go live
  };
  /// A commit: `all` approves pending changes first; `hunks` holds the current hunks of every
  /// file decided hunk by hunk (from the daemon's diff). Changes the model as a successful (or
  /// refused) commit must; returns what it expected.
  CommitPlan Commit(bool all, bool force, const std::map<std::string, std::vector<Hunk>>& hunks, std::string& problem);
  void Undo();
  void Discard();

 private:
  /// The files among `paths` in `tree` whose hard-link group has names outside `paths` get a
  /// group of their own (one per old group), in `follower` too where it holds them.
  void SplitGroups(Tree& tree, const std::set<std::string>& paths, Tree* follower);
  void Touch(const std::string& path);
  void JobMkdirs(const std::string& path);
  void LiveChanged(const std::string& path);
  void InvalidateUndo(const std::string& path);
};

/// The parent directories of `path` ("a/b/c" -> "a", "a/b").
std::vector<std::string> Parents(const std::string& path);

}  // namespace sandboxd::model
