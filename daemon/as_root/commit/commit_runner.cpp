#include "base/overlay.h"
#include "changes/live_conflicts.h"
#include "commit/commit_runner.h"
#include "quote_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <map>

#include "base/beneath.h"
#include "base/credentials.h"
#include "base/errors.h"
#include "base/fs_util.h"
#include "changes/conflict_check.h"
#include "commit/commit_planner.h"
#include "commit/commit_stage.h"
#include "commit/landing_area.h"
#include "commit/overlay_marks.h"
#include "commit/taken_list.h"
#include "commit/undo_check.h"
#include "helper_clients/helper_client.h"
#include "sandbox/stale_origins.h"

namespace sandboxd {
namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

/// overlayfs marks copied-up entries with trusted.overlay.* attributes (origin, nlink). They
/// mean something only inside an upper layer; an entry going live must not carry them into the
/// user's tree, where a later overlay could misread them. Only root may remove trusted.*; in
/// user mode the marks are user.overlay.* (overlay.h). `marks` notes them first, for a commit
/// that does not stand to give back (overlay_marks.h). Takes them off every entry the steps put
/// live that `marked` says may carry marks; `upper_fds[i]` holds root i's.
void StripPlacedEntries(const std::vector<CommitStep>& steps, const std::vector<int>& upper_fds,
                        const std::function<bool(const CommitStep&)>& marked, OverlayMarksTaken& marks) {
  std::vector<std::string> paths;
  size_t root = 0;
  for (const auto& step : steps) {
    if (step.action != StepAction::kPlace || !marked(step)) continue;
    if (step.root != root && !paths.empty()) {
      marks.TakeFromEach(upper_fds.at(root), root, paths);
      paths.clear();
    }
    root = step.root;
    paths.push_back(step.path);
  }
  if (!paths.empty()) marks.TakeFromEach(upper_fds.at(root), root, paths);
}

/// Where a commit notes the overlay marks it takes off (overlay_marks.h): with its backups.
std::string MarksTakenPath(const Sandbox& sandbox, int64_t commit) { return sandbox.paths().CommitBackupsDir(commit, 0) + "/marks"; }

}  // namespace

CommitRunner::CommitRunner(const Layout& layout, CommitJournal& journal, SightStore& sights, OwnerHelpers& helpers)
    : layout_(layout), journal_(journal), sights_(sights), helpers_(helpers) {}

CommitRunner::RootFds CommitRunner::OpenRoots(const Sandbox& sandbox) {
  RootFds fds;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    fds.lives.push_back(sandbox.OpenLiveRoot(i));
    fds.uppers.push_back(sandbox.OpenUpper(i));
    fds.live_fds.push_back(fds.lives.back().get());
    fds.upper_fds.push_back(fds.uppers.back().get());
    fds.prefixes.push_back(sandbox.PathPrefix(i));
    fds.landing.push_back(sandbox.LandsAcrossFileSystems(i));
    fds.any_landing |= fds.landing.back();
  }
  return fds;
}

namespace {

/// Two names of one inode must go live together or not at all: a name left in the sandbox
/// would still share the inode with the live one, and a later job writing it would change the
/// live file behind every commit. And whole: hunks make a new file of each name. Told each
/// change the commit takes before it is staged; what it holds grows with the taken files that
/// have other names only.
class HardLinkCheck {
 public:
  HardLinkCheck(const Sandbox& sandbox, const CommitRunner::RootFds& fds) : sandbox_(sandbox), fds_(fds) {}

  void Add(const TakenChange& taken) {
    if (taken.change.new_type != EntryType::kFile) return;
    auto st = StatBeneath(fds_.upper_fds[taken.root], taken.change.path);
    if (!st || st->st_nlink < 2) return;
    Names& names = taken_[{taken.root, st->st_ino}];
    (names.first.empty() ? names.first : names.second) = fds_.prefixes[taken.root] + taken.change.path;
    if (!taken.hunks.empty()) {
      // (Its own name stays in the upper: the stage gets a file merged from its hunks.)
      names.by_hunks = true;
      by_hunks_.insert({taken.root, taken.change.path});
    }
  }

  /// Once what the commit takes is staged: throws Error naming two names of a file that do not
  /// go together, whole.
  void Check() const {
    auto refuse = [](const std::string& one, const std::string& other) {
      return Error(Code::kInvalidArgument, one + " and " + other + " are two names of one file; approve both, whole, or neither");
    };
    for (const auto& [inode, names] : taken_)
      if (names.by_hunks && !names.second.empty()) throw refuse(names.first, names.second);
    if (taken_.empty()) return;
    // A name the commit does not take is still a change in the upper, which the taken ones have
    // left for the stage by now.
    for (size_t i = 0; i < sandbox_.roots().size(); ++i)
      sandbox_.StreamChanges(i, [&](Change&& change) {
        if (change.new_type != EntryType::kFile) return;
        auto st = StatBeneath(fds_.upper_fds[i], change.path);
        if (!st || by_hunks_.count({i, change.path})) return;
        if (auto it = taken_.find({i, st->st_ino}); it != taken_.end()) throw refuse(it->second.first, fds_.prefixes[i] + change.path);
      });
  }

 private:
  struct Names {
    std::string first, second;  ///< taken names (the first two)
    bool by_hunks = false;
  };
  const Sandbox& sandbox_;
  const CommitRunner::RootFds& fds_;
  std::map<std::pair<size_t, ino_t>, Names> taken_;
  std::set<std::pair<size_t, std::string>> by_hunks_;
};

/// Where a partial commit lists what it takes until its steps are planned (taken_list.h): with
/// the backups, never in a hard quota's file system (a sandbox at its quota must commit).
std::string TakenListPath(const Sandbox& sandbox, int64_t commit) { return sandbox.paths().CommitBackupsDir(commit, 0) + "/taken"; }

}  // namespace

CommitRunner::Outcome CommitRunner::Commit(Sandbox& sandbox, const CommitRequest& request, const Journaled& journaled,
                                           InodesByRoot* taken_back) {
  UserCredentials owner = LookupUser(sandbox.owner());
  // The upper itself becomes the backups only when everything in it goes live (sockets and
  // device nodes are not committed and stay in the sandbox) and it can be renamed into place,
  // on the live file system. Otherwise the commit goes through a stage, and across file
  // systems also through a landing area.
  if (request.whole_upper) {
    if (!TakesWholeUpper(sandbox)) throw Error(Code::kFailed, "sandbox " + sandbox.id() + " cannot commit its upper whole");
    return CommitWholeUpper(sandbox, request, owner, journaled, taken_back);
  }
  if (!request.taken) throw Error(Code::kInvalidArgument, "a commit of sandbox " + sandbox.id() + " must take something");
  return CommitStaged(sandbox, request, owner, journaled, taken_back);
}

bool CommitRunner::TakesWholeUpper(const Sandbox& sandbox) {
  for (size_t i = 0; i < sandbox.roots().size(); ++i)
    if (sandbox.LandsAcrossFileSystems(i)) return false;
  return true;
}

int64_t CommitRunner::AgreedUsec(const SandboxReader& sandbox) {
  return std::max<int64_t>(sandbox.created_usec(), journal_.LastFinishedUsec(sandbox.id()));
}

namespace {

/// A commit refused for conflicts names at most this many (the reply must fit a D-Bus message).
constexpr size_t kMaxConflictsNamed = 20;

/// Steps travel to the helper and from the journal this many at a time.
constexpr size_t kStepPage = 8192;

/// Changes are checked for conflicts and planned this many at a time.
constexpr size_t kChangePage = 4096;

Error ConflictError(const Sandbox& sandbox, const Conflicts& named, size_t total) {
  std::string list;
  for (const auto& [where, why] : named)
    list += (list.empty() ? "" : ", ") + api::QuotePath(sandbox.PathPrefix(where.first) + where.second) + " (" + why + ")";
  if (total > named.size()) list += " and " + std::to_string(total - named.size()) + " more";
  return Error(Code::kConflict, "sandbox " + sandbox.id() + " conflicts with the live tree, which changed where the sandbox " +
                                    "did not see it: " + list +
                                    "; nothing was committed (a forced commit takes the sandbox's version anyway)");
}

}  // namespace

void CommitRunner::PlanWholeUpper(const Sandbox& sandbox, int64_t commit, const CommitRequest& request,
                                  const UserCredentials& owner, const RootFds& fds, Outcome& outcome) {
  // One pass over the upper: a page of changes at a time is checked for conflicts and planned,
  // and its steps go to the journal. A conflict anywhere refuses the whole commit, naming the
  // first few; nothing has moved by then.
  std::optional<StreamedConflicts> conflicts;
  if (!request.force) conflicts.emplace(sandbox, sights_, AgreedUsec(sandbox), helpers_, owner);
  Conflicts named;
  size_t conflicting = 0;
  CommitPlanner planner(fds.live_fds, fds.upper_fds, fds.prefixes, request.renames);
  std::vector<RootChanges> page;
  std::vector<UpperEntry> uppers;  // of the page's changes, in order: the plan stats none again
  size_t in_page = 0;
  std::vector<CommitStep> steps;
  auto plan_page = [&] {
    if (conflicts) {
      for (auto& conflict : conflicts->Of(page)) {
        ++conflicting;
        if (named.size() < kMaxConflictsNamed) named.insert(std::move(conflict));
      }
    }
    if (conflicting == 0) {
      steps.clear();
      size_t at = 0;
      for (const auto& root : page)
        for (const auto& change : root.changes) planner.Plan(root.root, change, steps, &uppers[at++]);
      journal_.AppendSteps(commit, steps);
      for (const auto& [root, inodes] : InodesNamedBy(steps)) outcome.worked[root].insert(inodes.begin(), inodes.end());
    }
    for (const auto& root : page) outcome.committed += root.changes.size();
    sandbox.gate().ReportProgress({ProgressPhase::kPlanning, outcome.committed, 0, 0, 0});
    page.clear();
    uppers.clear();
    in_page = 0;
  };
  // No PrepareStream first: the commit unmounted the merged views before it planned (and linked
  // up what it had to then), so all it would do is a walk for the deletions, which the stream
  // below lists itself.
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    sandbox.StreamChangesTimed(i, [&](Change&& change, const UpperEntry& upper) {
      if (page.empty() || page.back().root != i) page.push_back({i, {}});
      page.back().changes.push_back(std::move(change));
      uppers.push_back(upper);
      if (++in_page == kChangePage) plan_page();
    });
  }
  plan_page();
  if (conflicting > 0) throw ConflictError(sandbox, named, conflicting);
  outcome.skipped = std::move(planner.skipped());
  outcome.committed -= outcome.skipped.size();
  // Only once no conflict refused it: what goes live loses the overlay's marks (none to look
  // for when no entry could carry any: a job that made new files).
  std::vector<bool> index_covers = IndexCovers(sandbox);
  bool all_covered = std::find(index_covers.begin(), index_covers.end(), false) == index_covers.end();
  if (!all_covered || planner.AnyPlaceMultiLinked()) {
    OverlayMarksTaken marks(MarksTakenPath(sandbox, commit));
    journal_.ForEachStepPage(commit, false, kStepPage, [&](const std::vector<CommitStep>& steps) {
      StripPlacedEntries(steps, fds.upper_fds, [&](const CommitStep& step) { return MayCarryMarks(planner, step, index_covers); },
                         marks);
    });
    marks.Close();
  }
}

std::vector<bool> CommitRunner::IndexCovers(const Sandbox& sandbox) {
  std::vector<bool> covers;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) covers.push_back(sandbox.IndexCoversUpper(i));
  return covers;
}

bool CommitRunner::MayCarryMarks(const CommitPlanner& planner, const CommitStep& step, const std::vector<bool>& index_covers) {
  // Under index=on with nfs_export=on (every system-mode overlay) each copy-up is linked into
  // the overlay's index, so where the index covers the upper an entry with one link was never
  // copied up and carries no mark. Elsewhere (user mode, after a resume) every entry is looked at.
  return !index_covers.at(step.root) || planner.PlacesMultiLinked(step.seq);
}

CommitRunner::Outcome CommitRunner::CommitWholeUpper(Sandbox& sandbox, const CommitRequest& request, const UserCredentials& owner,
                                                     const Journaled& journaled, InodesByRoot* taken_back) {
  Outcome outcome;
  RootFds fds = OpenRoots(sandbox);
  int64_t commit = journal_.BeginPlanning(sandbox.id(), request.force);
  try {
    if (journaled) journaled(commit);
    // Before the plan, which notes there the overlay marks it takes off.
    PrepareDirectories(sandbox, commit, false);
    PlanWholeUpper(sandbox, commit, request, owner, fds, outcome);
    if (outcome.committed + outcome.skipped.size() == 0) {
      AbandonPlanned(sandbox, commit);
      return {};
    }
    journal_.SetState(commit, CommitState::kApplying);
  } catch (...) {
    // Nothing moved: the commit leaves no trace (its steps may be a million rows).
    AbandonPlanned(sandbox, commit);
    throw;
  }
  // (Only a commit that fails needs them: one that stands leaves nothing in sight.)
  Sights current = CurrentSightsOf(sights_, sandbox, outcome.worked);
  if (taken_back) *taken_back = outcome.worked;
  try {
    Run(sandbox, commit, StepDirection::kForward, false);
  } catch (...) {
    // Take back whatever was done. If even that fails, the journal still says "applying": the
    // next start-up finishes the commit or takes it back, and until then the sandbox is frozen.
    try {
      Run(sandbox, commit, StepDirection::kBack, false);
    } catch (const std::exception& e) {
      std::string why = "commit " + std::to_string(commit) + " failed and could not be taken back (" + e.what() +
                        "); restarting sandboxd finishes it or takes it back";
      sandbox.gate().MarkBroken(why);
      throw Error(Code::kInvalidState, "sandbox " + sandbox.id() + ": " + why);
    }
    GiveBackMarks(sandbox, commit);
    journal_.SetState(commit, CommitState::kRolledBack);
    RemoveCommitDirs(sandbox, commit);
    ResightAfterTakingBack(sandbox, current);
    throw;
  }
  journal_.SetState(commit, CommitState::kApplied);
  KeepBackups(sandbox, commit);
  // The whole upper took it away (it is the backups now): nothing is left to see, not even by
  // the copies it held of files that were no change any more.
  sights_.Clear(sandbox.id());
  journal_.Finish(commit);
  return outcome;
}


TakenRenames CommitRunner::StageTaken(const Sandbox& sandbox, int64_t commit, const CommitRequest& request,
                                      const UserCredentials& owner, const RootFds& fds, const std::vector<int>& stage_fds,
                                      Outcome& outcome) {
  // One pass over what the commit takes, a page at a time: each page checked for conflicts
  // (unless forced) and, while none refused the commit, staged and listed for the plan. A
  // conflict anywhere refuses the whole commit, naming the first few; the caller puts back
  // what was staged.
  std::optional<StreamedConflicts> conflicts;
  if (!request.force) conflicts.emplace(sandbox, sights_, AgreedUsec(sandbox), helpers_, owner);
  Conflicts named;
  size_t conflicting = 0;
  HardLinkCheck links(sandbox, fds);
  TakenListWriter list(TakenListPath(sandbox, commit));
  std::vector<TakenChange> page;
  auto stage_page = [&] {
    std::vector<RootChanges> changes = ChangesByRoot(page);
    if (conflicts) {
      for (auto& conflict : conflicts->Of(changes)) {
        ++conflicting;
        if (named.size() < kMaxConflictsNamed) named.insert(std::move(conflict));
      }
    }
    if (conflicting == 0) {
      for (const auto& root : changes) {
        std::vector<Change> whole;
        for (const auto& taken : page)
          if (taken.root == root.root && taken.hunks.empty()) whole.push_back(taken.change);
        StageEntries(fds.upper_fds[root.root], stage_fds[root.root], whole, owner.uid, owner.gid);
      }
      for (const auto& taken : page) {
        if (taken.hunks.empty()) continue;
        UniqueFd merged = CreateStagedFile(fds.upper_fds[taken.root], fds.live_fds[taken.root], stage_fds[taken.root], taken.change.path,
                                           owner.uid, owner.gid);
        struct stat staged;
        if (fstat(merged.get(), &staged) != 0) ThrowErrno("cannot stat the merged " + taken.change.path);
        MergeHunksAsOwner(helpers_, owner, fds.live_fds[taken.root], fds.upper_fds[taken.root], taken.change.path, taken.hunks,
                          merged.get());
        // The owner's writes cleared the set-user-ID and set-group-ID bits (as any write by one
        // without CAP_FSETID does): the live mode the merged file keeps is set again after them.
        if (fchmod(merged.get(), staged.st_mode & 07777) != 0) ThrowErrno("cannot set the mode of the merged " + taken.change.path);
      }
      for (const auto& taken : page) list.Append(taken.root, taken.change);
    }
    outcome.committed += page.size();
    sandbox.gate().ReportProgress({ProgressPhase::kStaging, outcome.committed, 0, 0, 0});
    page.clear();
  };
  TakenRenames renames = request.taken([&](TakenChange&& taken) {
    links.Add(taken);  // (before it is staged: its other names are found in the upper)
    page.push_back(std::move(taken));
    if (page.size() == kChangePage) stage_page();
  });
  stage_page();
  list.Close();
  if (conflicting > 0) throw ConflictError(sandbox, named, conflicting);
  links.Check();
  return renames;
}

void CommitRunner::PlanStaged(int64_t commit, const Sandbox& sandbox, const RootFds& fds, const std::vector<int>& stage_fds,
                              const TakenRenames& renames, Outcome& outcome) {
  CommitPlanner planner(fds.live_fds, stage_fds, fds.prefixes, renames);
  std::vector<bool> index_covers = IndexCovers(sandbox);
  OverlayMarksTaken marks(MarksTakenPath(sandbox, commit));
  std::vector<CommitStep> steps, own_stage_steps;
  ForEachTakenPage(TakenListPath(sandbox, commit), kChangePage, [&](const std::vector<RootChanges>& page) {
    steps.clear();
    for (const auto& root : page)
      for (const auto& change : root.changes) planner.Plan(root.root, change, steps);
    // (Copies in a landing area carry no overlay attributes: only root could have copied them.)
    own_stage_steps.clear();
    for (const auto& step : steps)
      if (!fds.landing[step.root]) own_stage_steps.push_back(step);
    StripPlacedEntries(own_stage_steps, stage_fds, [&](const CommitStep& step) { return MayCarryMarks(planner, step, index_covers); },
                       marks);
    journal_.AppendSteps(commit, steps);
  });
  marks.Close();
  outcome.skipped = std::move(planner.skipped());
  outcome.committed -= outcome.skipped.size();
  std::remove(TakenListPath(sandbox, commit).c_str());  // planned: of no use any more
}

CommitRunner::Outcome CommitRunner::CommitStaged(Sandbox& sandbox, const CommitRequest& request, const UserCredentials& owner,
                                                 const Journaled& journaled, InodesByRoot* taken_back) {
  Outcome outcome;
  RootFds fds = OpenRoots(sandbox);
  int64_t commit = journal_.BeginStaging(sandbox.id(), request.force);
  try {
    if (journaled) journaled(commit);
    PrepareDirectories(sandbox, commit, true);
    std::vector<UniqueFd> stages;
    std::vector<int> stage_fds;
    for (size_t i = 0; i < sandbox.roots().size(); ++i) {
      stages.push_back(OpenDirectoryNoSymlinks(sandbox.paths().CommitUpperDir(commit, i), O_PATH));
      stage_fds.push_back(stages.back().get());
    }
    TakenRenames renames = StageTaken(sandbox, commit, request, owner, fds, stage_fds, outcome);
    if (outcome.committed == 0) {
      Unstage(sandbox, commit);
      return {};
    }
    // Across file systems the stage is copied onto the live one, and the steps take their
    // entries from there (landing_area.h).
    for (size_t i = 0; i < sandbox.roots().size(); ++i) {
      if (!fds.landing[i]) continue;
      LandingArea landing = Landing(sandbox, commit, i, fds.live_fds[i]);
      landing.Fill(stage_fds[i]);
      stages[i] = landing.OpenUpper();
      stage_fds[i] = stages[i].get();
    }
    PlanStaged(commit, sandbox, fds, stage_fds, renames, outcome);
    journal_.SetState(commit, CommitState::kApplying);
  } catch (...) {
    Unstage(sandbox, commit);
    throw;
  }

  outcome.worked = InodesNamedByCommit(commit);
  Sights others = CurrentSightsOf(sights_, sandbox, outcome.worked);
  if (taken_back) *taken_back = outcome.worked;
  try {
    Run(sandbox, commit, StepDirection::kForward, true);
  } catch (...) {
    try {
      Run(sandbox, commit, StepDirection::kBack, true);
      Unstage(sandbox, commit);
      ResightAfterTakingBack(sandbox, others);
    } catch (const std::exception& e) {
      std::string why = "commit " + std::to_string(commit) + " failed and could not be taken back (" + e.what() +
                        "); restarting sandboxd finishes it or takes it back";
      sandbox.gate().MarkBroken(why);
      throw Error(Code::kInvalidState, "sandbox " + sandbox.id() + ": " + why);
    }
    throw;
  }
  journal_.SetState(commit, CommitState::kApplied);
  Settle(sandbox, commit);
  for (auto& note : KeepLandedBackups(sandbox, commit)) outcome.skipped.push_back(std::move(note));
  if (auto note = SettleAfterMoves(sandbox, commit, true, others)) outcome.skipped.push_back(*note);
  journal_.Finish(commit);
  return outcome;
}

InodesByRoot CommitRunner::InodesNamedByCommit(int64_t commit) {
  InodesByRoot worked;
  journal_.ForEachStepPage(commit, false, kStepPage, [&](const std::vector<CommitStep>& steps) {
    for (const auto& [root, inodes] : InodesNamedBy(steps)) worked[root].insert(inodes.begin(), inodes.end());
  });
  return worked;
}

CommitRunner::UndoOutcome CommitRunner::Undo(Sandbox& sandbox) {
  auto last = journal_.LastDone(sandbox.id());
  if (!last) throw Error(Code::kNotFound, "sandbox " + sandbox.id() + " has no commit to undo");
  RootFds fds = OpenRoots(sandbox);
  UndoOutcome outcome;
  outcome.commit = last->id;
  // The steps are read a page at a time (a commit may have a million), here and below.
  UndoConflictFinder finder(fds.live_fds, fds.prefixes, last->finished_usec * 1000, journal_.PutBackSince(sandbox.id(), last->id),
                            kMaxConflictsNamed);
  journal_.ForEachStepPage(last->id, false, kStepPage, [&](const std::vector<CommitStep>& steps) {
    finder.Check(steps);
    outcome.steps += steps.size();
  });
  auto conflicts = finder.Finish();
  if (!conflicts.empty()) {
    std::string list;
    for (const auto& conflict : conflicts) list += (list.empty() ? "" : ", ") + conflict;
    if (finder.count() > conflicts.size()) list += " and " + std::to_string(finder.count() - conflicts.size()) + " more";
    throw Error(Code::kConflict, "cannot undo commit " + std::to_string(last->id) + " of sandbox " + sandbox.id() +
                                     ": the live tree changed since: " + list + "; nothing was undone");
  }
  if (fds.any_landing) {
    // A root whose layers are on another file system had its backups copied into the state
    // directory; the steps take them back by rename, so they go onto its file system first.
    journal_.SetState(last->id, CommitState::kImporting);
    std::vector<CommitStep> steps;
    try {
      steps = ImportBackups(sandbox, last->id, journal_.StepsOf(last->id));
    } catch (const std::exception& e) {
      RemoveLandings(sandbox, last->id);
      journal_.SetState(last->id, CommitState::kDone);
      Code code = Code::kFailed;
      if (const auto* error = dynamic_cast<const Error*>(&e)) code = error->code();
      throw Error(code, "cannot undo commit " + std::to_string(last->id) + " of sandbox " + sandbox.id() +
                            ": its backups cannot be brought back onto the live file system (" + e.what() +
                            "); nothing was undone");
    }
    journal_.BeginUndo(last->id, steps);
  } else {
    // The backups of a whole-upper commit are its old upper, those of a staged one its stage:
    // both live where a staged commit keeps its stage, so the steps go back the same way.
    journal_.SetState(last->id, CommitState::kUndoing);
  }
  outcome.worked = InodesNamedByCommit(last->id);
  Sights others = CurrentSightsOf(sights_, sandbox, outcome.worked);
  try {
    Run(sandbox, last->id, StepDirection::kBack, true);
  } catch (...) {
    try {
      Run(sandbox, last->id, StepDirection::kForward, true);
      journal_.SetState(last->id, CommitState::kDone);
      RemoveLandings(sandbox, last->id);
    } catch (const std::exception& e) {
      std::string why = "undo of commit " + std::to_string(last->id) + " failed and could not be taken back (" + e.what() +
                        "); restarting sandboxd settles it";
      sandbox.gate().MarkBroken(why);
      throw Error(Code::kInvalidState, "sandbox " + sandbox.id() + ": " + why);
    }
    throw;
  }
  journal_.SetState(last->id, CommitState::kReturning);
  outcome.notes = ReturnToSandbox(sandbox, last->id, others);
  return outcome;
}

std::vector<std::string> CommitRunner::Recover(Sandbox& sandbox) {
  std::vector<std::string> lines;
  auto note = [&lines](std::vector<std::string> notes) {
    for (auto& line : notes) lines.push_back(std::move(line));
  };
  for (const auto& commit : journal_.Unfinished(sandbox.id())) {
    std::string what = "commit " + std::to_string(commit.id) + " of sandbox " + sandbox.id();
    switch (commit.state) {
      case CommitState::kImporting:
        note(RemoveLandings(sandbox, commit.id));
        journal_.SetState(commit.id, CommitState::kDone);
        lines.push_back("the undo of " + what + " was cut off before it started; the commit stands");
        continue;
      case CommitState::kUndoing:
        try {
          Run(sandbox, commit.id, StepDirection::kBack, true);
        } catch (const std::exception& e) {
          Run(sandbox, commit.id, StepDirection::kForward, true);
          journal_.SetState(commit.id, CommitState::kDone);
          note(RemoveLandings(sandbox, commit.id));
          lines.push_back("the undo of " + what + " was cut off and could not be finished (" + e.what() + "); the commit stands");
          continue;
        }
        journal_.SetState(commit.id, CommitState::kReturning);
        [[fallthrough]];
      case CommitState::kReturning:
        note(ReturnToSandbox(sandbox, commit.id));
        lines.push_back("the undo of " + what + " was cut off; finished it");
        continue;
      case CommitState::kPlanning:
        AbandonPlanned(sandbox, commit.id);
        lines.push_back(what + " was cut off before it started; nothing of it had moved");
        continue;
      case CommitState::kStaging:
        note(Unstage(sandbox, commit.id));
        lines.push_back(what + " was cut off before it started; put its changes back into the sandbox");
        continue;
      case CommitState::kApplying:
        PrepareDirectories(sandbox, commit.id, commit.staged);
        try {
          Run(sandbox, commit.id, StepDirection::kForward, commit.staged);
          lines.push_back(what + " was cut off; finished it");
        } catch (const std::exception& e) {
          Run(sandbox, commit.id, StepDirection::kBack, commit.staged);
          if (commit.staged) {
            note(Unstage(sandbox, commit.id));
          } else {
            GiveBackMarks(sandbox, commit.id);
            journal_.SetState(commit.id, CommitState::kRolledBack);
            RemoveCommitDirs(sandbox, commit.id);
          }
          lines.push_back(what + " was cut off and could not be finished (" + e.what() + "); took it back");
          continue;
        }
        journal_.SetState(commit.id, CommitState::kApplied);
        break;
      case CommitState::kApplied:
        lines.push_back(what + " was cut off while keeping its backups; finished it");
        break;
      case CommitState::kDone:
      case CommitState::kRolledBack:
      case CommitState::kUndone:
        continue;  // finished (Unfinished lists none of these)
    }
    // Applied (now or before the cut): its backups are kept and it is finished.
    if (commit.staged) {
      Settle(sandbox, commit.id);
    } else {
      KeepBackups(sandbox, commit.id);
    }
    note(KeepLandedBackups(sandbox, commit.id));
    if (auto line = SettleAfterMoves(sandbox, commit.id, commit.staged)) lines.push_back(*line);
    journal_.Finish(commit.id);
  }
  return lines;
}

void CommitRunner::PrepareDirectories(const Sandbox& sandbox, int64_t commit, bool staged) {
  // Each root's commit area is on the root's storage (the same file system as its upper).
  for (const auto& dir : sandbox.paths().StorageDirs()) {
    std::string area = dir + "/commits/" + std::to_string(commit);
    MakeDirectory(dir + "/commits", 0700);
    MakeDirectory(area, 0700);
    MakeDirectory(area + "/removed", 0700);
    MakeDirectory(area + "/upper", 0700);
    MakeDirectory(area + "/backup", 0700);
  }
  // The helper, running as the owner, moves removed live entries in here (and, for a staged
  // commit, exchanges entries in the stage).
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    MakeDirectory(sandbox.paths().CommitRemovedDir(commit, i), 0700, sandbox.owner(), kOwnId);
    if (staged) MakeDirectory(sandbox.paths().CommitUpperDir(commit, i), 0700, sandbox.owner(), kOwnId);
    // The owner's helper reads the backups from here when an undo brings them back.
    if (sandbox.LandsAcrossFileSystems(i)) MakeDirectory(sandbox.paths().CommitBackupDir(commit, i), 0700, sandbox.owner(), kOwnId);
  }
}

void CommitRunner::RemoveCommitDirs(const Sandbox& sandbox, int64_t commit) {
  for (const auto& dir : sandbox.paths().StorageDirs()) RemoveTree(dir + "/commits/" + std::to_string(commit));
}

void CommitRunner::Run(const Sandbox& sandbox, int64_t commit, StepDirection direction, bool staged) {
  std::vector<UniqueFd> fds;
  std::vector<StepHelperRoot> roots;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    fds.push_back(sandbox.OpenLiveRoot(i));
    if (sandbox.LandsAcrossFileSystems(i)) {
      LandingArea landing = Landing(sandbox, commit, i, fds.back().get());
      fds.push_back(landing.OpenUpper());
      fds.push_back(landing.OpenRemoved());
    } else {
      fds.push_back(staged ? OpenDirectoryNoSymlinks(sandbox.paths().CommitUpperDir(commit, i), O_PATH) : sandbox.OpenUpper(i));
      fds.push_back(OpenDirectoryNoSymlinks(sandbox.paths().CommitRemovedDir(commit, i), O_PATH));
    }
    roots.push_back({fds[fds.size() - 3].get(), fds[fds.size() - 2].get(), fds.back().get()});
  }
  // The steps go to the helper a page at a time, as the journal holds them (back: the last page
  // first): a commit of a million entries is never one request. The last page syncs; when the
  // last was a whole page, one more request with no steps does.
  UserCredentials owner = LookupUser(sandbox.owner());
  bool synced = false;
  ProgressFigures moved{ProgressPhase::kMoving, 0, journal_.StepCount(commit), 0, 0};
  sandbox.gate().ReportProgress(moved);
  journal_.ForEachStepPage(commit, direction == StepDirection::kBack, kStepPage, [&](const std::vector<CommitStep>& steps) {
    synced = steps.size() < kStepPage;
    RunStepsHelper(helpers_, owner, direction, roots, steps, synced);
    sandbox.gate().AdvanceProgress(steps.size());
  });
  if (!synced) RunStepsHelper(helpers_, owner, direction, roots, {}, true);
}

std::optional<std::string> CommitRunner::SettleAfterMoves(const Sandbox& sandbox, int64_t commit, bool upper_kept,
                                                          const Sights& others) {
  try {
    if (!upper_kept) {
      // A commit of the whole upper took it away (it is the backups now): nothing is left to
      // see, not even by the copies it held of files that were no change any more.
      sights_.Clear(sandbox.id());
      return std::nullopt;
    }
    std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;  // live, upper
    std::map<size_t, UniqueFd> indexes;
    journal_.ForEachStepPage(commit, false, kStepPage, [&](const std::vector<CommitStep>& steps) {
      std::vector<std::pair<size_t, std::string>> paths;
      std::map<size_t, std::vector<std::string>> per_root;
      for (const auto& step : steps) {
        paths.emplace_back(step.root, step.path);
        per_root[step.root].push_back(step.path);
        if (!step.from.empty()) paths.emplace_back(step.root, step.from);
      }
      ResightAfter(sights_, sandbox, paths);
      for (const auto& [root, root_paths] : per_root) {
        auto& [live, upper] = roots[root];
        if (!live) {
          live = sandbox.OpenLiveRoot(root);
          upper = sandbox.OpenUpper(root);
          std::string index = sandbox.paths().WorkDir(root) + "/index";
          if (Exists(index)) indexes[root] = OpenDirectoryNoSymlinks(index, O_RDONLY);
        }
        auto index = indexes.find(root);
        ForgetStaleOrigins(live.get(), upper.get(), index == indexes.end() ? -1 : index->second.get(), root_paths);
      }
    });
    ResightOtherNames(sights_, sandbox, others);
    return std::nullopt;
  } catch (const std::exception& e) {
    // Left as they were, the sights make these paths conflict: refused, never missed.
    return "cannot settle sandbox " + sandbox.id() + " with the live tree after commit work (" + e.what() +
           "); its paths may show as conflicts, or live files be missing from its view until it is discarded";
  }
}

void CommitRunner::ResightAfterTakingBack(const Sandbox& sandbox, const Sights& current) {
  // The live entries the steps moved and moved back are the ones the sandbox saw, but their
  // ctimes moved with it: left so, every one of them would be a conflict the owner never made,
  // and the sandbox could not commit again without --force.
  try {
    ResightOtherNames(sights_, sandbox, current);
  } catch (const std::exception&) {
    // Left as they were, the sights make these paths conflict: refused, never missed.
  }
}

std::vector<std::string> CommitRunner::Unstage(const Sandbox& sandbox, int64_t commit) {
  auto notes = RemoveLandings(sandbox, commit);
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    std::string stage = sandbox.paths().CommitUpperDir(commit, i);
    if (!Exists(stage)) continue;
    UniqueFd upper = sandbox.OpenUpper(i);
    UniqueFd stage_fd = OpenDirectoryNoSymlinks(stage, O_PATH);
    sandboxd::Unstage(upper.get(), stage_fd.get());
  }
  GiveBackMarks(sandbox, commit);
  journal_.SetState(commit, CommitState::kRolledBack);
  journal_.ForgetSteps(commit);
  RemoveCommitDirs(sandbox, commit);
  return notes;
}

void CommitRunner::GiveBackMarks(const Sandbox& sandbox, int64_t commit) {
  std::vector<UniqueFd> uppers;
  std::vector<int> upper_fds;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    uppers.push_back(sandbox.OpenUpper(i));
    upper_fds.push_back(uppers.back().get());
  }
  GiveBackOverlayMarks(MarksTakenPath(sandbox, commit), upper_fds);
}

void CommitRunner::AbandonPlanned(const Sandbox& sandbox, int64_t commit) {
  try {
    GiveBackMarks(sandbox, commit);
  } catch (const std::exception&) {
    // The marks stay off: the sandbox's overlay will not mount, which the remount reports.
  }
  RemoveCommitDirs(sandbox, commit);
  journal_.Abandon(commit);
}

std::vector<std::string> CommitRunner::ReturnToSandbox(const Sandbox& sandbox, int64_t commit, const Sights& others) {
  // A landing area now holds copies of what the commit put live; the originals are in the stage.
  auto notes = RemoveLandings(sandbox, commit);
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    std::string kept = sandbox.paths().CommitUpperDir(commit, i);
    if (!Exists(kept)) continue;
    UniqueFd upper = sandbox.OpenUpper(i);
    UniqueFd kept_fd = OpenDirectoryNoSymlinks(kept, O_PATH);
    sandboxd::Unstage(upper.get(), kept_fd.get());
  }
  // What the undo put back live through a landing area are copies: the earlier commits must
  // know them by their new inodes to be undone in turn.
  std::vector<InodeAlias> aliases;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    if (!sandbox.LandsAcrossFileSystems(i)) continue;
    UniqueFd live = sandbox.OpenLiveRoot(i);
    UniqueFd backup = OpenDirectoryNoSymlinks(sandbox.paths().CommitBackupDir(commit, i), O_PATH);
    UniqueFd removed = OpenDirectoryNoSymlinks(sandbox.paths().CommitRemovedDir(commit, i), O_PATH);
    journal_.ForEachStepPage(commit, false, kStepPage, [&](const std::vector<CommitStep>& steps) {
      for (auto& alias : RestoredAliases(backup.get(), removed.get(), live.get(), i, steps)) aliases.push_back(std::move(alias));
    });
  }
  if (auto note = SettleAfterMoves(sandbox, commit, true, others)) notes.push_back(*note);
  journal_.FinishUndo(commit, aliases);
  RemoveCommitDirs(sandbox, commit);
  return notes;
}

LandingArea CommitRunner::Landing(const Sandbox& sandbox, int64_t commit, size_t root, int live_fd) const {
  return LandingArea(helpers_, LookupUser(sandbox.owner()), live_fd, LandingName(sandbox.id(), commit), sandbox.roots()[root]);
}

void CommitRunner::ForEachLanding(const Sandbox& sandbox, int64_t commit,
                                  const std::function<void(size_t root, const LandingArea& landing)>& work) const {
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    if (!sandbox.LandsAcrossFileSystems(i)) continue;
    UniqueFd live = sandbox.OpenLiveRoot(i);
    work(i, Landing(sandbox, commit, i, live.get()));
  }
}

std::vector<std::string> CommitRunner::RemoveLandings(const Sandbox& sandbox, int64_t commit) {
  std::vector<std::string> notes;
  ForEachLanding(sandbox, commit, [&](size_t, const LandingArea& landing) {
    if (std::string note = landing.Remove(); !note.empty()) notes.push_back("sandbox " + sandbox.id() + ": " + note);
  });
  return notes;
}

std::vector<CommitStep> CommitRunner::ImportBackups(const Sandbox& sandbox, int64_t commit, std::vector<CommitStep> steps) {
  ForEachLanding(sandbox, commit, [&](size_t root, const LandingArea& landing) {
    UniqueFd backup = OpenDirectoryNoSymlinks(sandbox.paths().CommitBackupDir(commit, root), O_PATH);
    UniqueFd removed = OpenDirectoryNoSymlinks(sandbox.paths().CommitRemovedDir(commit, root), O_PATH);
    landing.Import(backup.get(), removed.get());
    steps = RebaseOnImportedBackups(std::move(steps), root, landing.OpenUpper().get(), landing.OpenRemoved().get());
  });
  return steps;
}

std::vector<std::string> CommitRunner::KeepLandedBackups(const Sandbox& sandbox, int64_t commit) {
  std::vector<std::string> notes;
  ForEachLanding(sandbox, commit, [&](size_t root, const LandingArea& landing) {
    landing.Evacuate(sandbox.paths().CommitBackupDir(commit, root), sandbox.paths().CommitRemovedDir(commit, root));
    if (std::string note = landing.Remove(); !note.empty()) notes.push_back("sandbox " + sandbox.id() + ": " + note);
  });
  return notes;
}

void CommitRunner::Settle(const Sandbox& sandbox, int64_t commit) {
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    // Root i's steps, read from the journal a page at a time (a commit may have a million).
    StepPages root_steps = [&](const std::function<void(const std::vector<CommitStep>&)>& visit) {
      std::vector<CommitStep> mine;
      journal_.ForEachStepPage(commit, false, kStepPage, [&](const std::vector<CommitStep>& steps) {
        mine.clear();
        for (const auto& step : steps)
          if (step.root == i) mine.push_back(step);
        if (!mine.empty()) visit(mine);
      });
    };
    UniqueFd upper = sandbox.OpenUpper(i);
    UniqueFd live = sandbox.OpenLiveRoot(i);
    UniqueFd stage = OpenDirectoryNoSymlinks(sandbox.paths().CommitUpperDir(commit, i), O_PATH);
    // The index links the upper's own inodes. Across file systems the ones that went live are
    // copies, and the originals stay with the commit, in its stage: their entries go (the stage
    // holds nothing else). On one file system the entries of the inodes that went live go.
    std::string index = sandbox.paths().WorkDir(i) + "/index";
    UniqueFd index_fd;
    if (Exists(index)) index_fd = OpenDirectoryNoSymlinks(index, O_RDONLY);
    const std::set<ino_t> indexed = IndexInodes(index_fd ? index_fd.get() : -1);
    // The sandbox's inodes whose files went live. Other names of them the upper still holds
    // (hard links linked up beside them, unchanged) leave it: the live tree shows them now.
    // `taken` are those whose index entries go here: across file systems every original in the
    // stage; on one file system the copies the stage kept of files that went live by a chmod or
    // by moving the live file (a placed file's entry goes in SettleUpperAfterCommit). The other
    // names of the sandbox's own files the stage keeps (`kept`) move into the stage beside
    // them, for an undo to give back; those of a file placed live (`placed`, live now) go.
    // Only inodes the index links, or with other names, matter: the sets stay small.
    std::set<ino_t> taken, kept, placed;  // kept, placed: those whose other names are looked for (a walk)
    if (sandbox.LandsAcrossFileSystems(i)) {
      taken = FileInodesBeneath(stage.get(), false, &indexed);
      kept = FileInodesBeneath(stage.get(), true);
    } else {
      root_steps([&](const std::vector<CommitStep>& steps) {
        for (const auto& step : steps) {
          if (step.action == StepAction::kChmod || step.action == StepAction::kMove) {
            auto staged = StatBeneath(stage.get(), step.path);
            if (!staged || S_ISDIR(staged->st_mode)) continue;
            if (indexed.count(staged->st_ino)) taken.insert(staged->st_ino);
            if (staged->st_nlink > 1) kept.insert(staged->st_ino);
          }
          if (step.action != StepAction::kPlace) continue;
          auto live_entry = StatBeneath(live.get(), step.path);
          if (live_entry && live_entry->st_ino == step.new_ino && live_entry->st_nlink > 1) placed.insert(step.new_ino);
        }
      });
    }
    // What such a name saw of the live tree goes with it: a later job that copies it again
    // sees the live file afresh (live_sight.h). (Cut off before this, it stays: a conflict at
    // worst, never a missed one.)
    std::vector<std::pair<size_t, std::string>> left;
    for (auto& path : StashNamesOf(upper.get(), stage.get(), kept, sandbox.owner(), 0)) left.emplace_back(i, std::move(path));
    for (auto& path : DropNamesOf(upper.get(), placed)) left.emplace_back(i, std::move(path));
    sights_.Forget(sandbox.id(), left);
    if (index_fd) ForgetIndexEntries(index_fd.get(), taken);
    SettleUpperAfterCommit(upper.get(), live.get(), stage.get(), sandbox.LandsAcrossFileSystems(i) || !index_fd ? -1 : index_fd.get(),
                           root_steps, sandbox.owner(), 0);
  }
}

void CommitRunner::KeepBackups(const Sandbox& sandbox, int64_t commit) {
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    std::string upper = sandbox.paths().UpperDir(i);
    std::string kept = sandbox.paths().CommitUpperDir(commit, i);
    struct stat attributes;
    if (lstat(upper.c_str(), &attributes) == 0 && !Exists(kept)) {
      if (rename(upper.c_str(), kept.c_str()) != 0) ThrowErrno("cannot keep the backups of commit " + std::to_string(commit));
      // Its successor at once, with its attributes (the live root's, SetUp gave it), before the
      // journal says the commit is done: a daemon killed before the sandbox is set up again
      // comes back to an empty upper, not to a missing one it must call lost; made whole, or a
      // kill could leave it bare (root's, 0700), which nothing would make again.
      MakeDirectoryWhole(upper, attributes.st_mode & 07777, attributes.st_uid, attributes.st_gid);
    }
    // Now, not later from a trash: the index holds a link to each file that went live, and its
    // removal changes their ctimes, which undo compares with what the commit recorded (a work
    // layer emptied after the commit made every undo refuse: "changed since the commit").
    RemoveTree(sandbox.paths().WorkDir(i));
  }
}

}  // namespace sandboxd
