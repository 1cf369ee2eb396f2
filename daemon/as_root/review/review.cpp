#include "review/review.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <optional>
#include <set>

#include "base/beneath.h"
#include "base/errors.h"
#include "changes/change_selection.h"
#include "changes/commit_selection.h"
#include "changes/git_units.h"
#include "commit/commit_planner.h"
#include "model/renames.h"
#include "selector.h"

namespace sandboxd {
namespace {

/// Whether a side of this type has a size worth showing (a directory's st_size is the file
/// system's business).
bool HasSize(EntryType type) { return type == EntryType::kFile || type == EntryType::kSymlink; }

/// Gives every decided approval without one the fingerprint of its change as it is now.
void FillFingerprints(const SandboxReader& sandbox, std::vector<Approval>& approvals) {
  std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;
  for (auto& approval : approvals) {
    if (!approval.fingerprint.empty() || (approval.hunks.empty() && approval.whole == Verdict::kPending)) continue;
    auto& fds = roots[approval.root];
    if (!fds.first) fds = {sandbox.OpenLiveRoot(approval.root), sandbox.OpenUpper(approval.root)};
    approval.fingerprint = ChangeFingerprint(fds.first.get(), fds.second.get(), approval.path);
  }
}

/// Binds each decision of `approvals` to its content's digest as it is now when `digest` is
/// given (a job of the sandbox runs), else leaves it made on its fingerprint alone.
void BindContent(std::vector<Approval>& approvals, const ContentDigester& digest) {
  if (!digest) {
    for (auto& approval : approvals) approval.content.clear();
    return;
  }
  std::map<size_t, std::vector<size_t>> by_root;
  for (size_t i = 0; i < approvals.size(); ++i) by_root[approvals[i].root].push_back(i);
  for (const auto& [root, indices] : by_root) {
    std::vector<std::string> paths;
    for (size_t i : indices) paths.push_back(approvals[i].path);
    std::vector<std::string> digests = digest(root, paths);
    for (size_t k = 0; k < indices.size() && k < digests.size(); ++k) approvals[indices[k]].content = digests[k];
  }
}

}  // namespace

size_t Review::CheckBound(const SandboxReader& sandbox, const ContentDigester& digest, bool unbind) {
  std::vector<Approval> bound = store_.Bound(sandbox.id());
  if (bound.empty()) return 0;
  std::map<size_t, std::vector<size_t>> by_root;
  for (size_t i = 0; i < bound.size(); ++i) by_root[bound[i].root].push_back(i);
  std::vector<RecordKey> lapsed;
  std::vector<Approval> unbound;
  for (const auto& [root, indices] : by_root) {
    std::vector<std::string> paths;
    for (size_t i : indices) paths.push_back(bound[i].path);
    std::vector<std::string> now = digest(root, paths);
    for (size_t k = 0; k < indices.size(); ++k) {
      Approval& approval = bound[indices[k]];
      if (k >= now.size() || now[k] != approval.content) {
        lapsed.emplace_back(approval.root, approval.path);
      } else if (unbind) {
        approval.content.clear();
        unbound.push_back(std::move(approval));
      }
    }
  }
  store_.Forget(sandbox.id(), lapsed);
  store_.Save(sandbox.id(), unbound);
  return lapsed.size();
}

std::vector<ReviewedChange> Review::Current(const SandboxReader& sandbox) {
  std::vector<ReviewedChange> reviewed;
  ForEach(sandbox, [&](ReviewedChange&& item) { reviewed.push_back(std::move(item)); });
  return reviewed;
}

namespace {

/// Whether `fingerprint` is a decision pinned for a move (decision_pins.h) that still holds:
/// what a move keeps of the upper entry, and the live entry as it was.
bool PinnedForMoveHolds(const std::string& fingerprint, int live_fd, int upper_fd, const std::string& path) {
  auto parts = SplitFingerprint(fingerprint);
  return parts && parts->kind == 's' && parts->upper == ArchivedStamp(upper_fd, path) && parts->live == LiveSideStamp(live_fd, path);
}

/// The decision stored for `key` if it was made on the change as it is now, else a pending one
/// with the change's fingerprint (what a decision made now is made on). `moving`: the decisions
/// were just pinned for a move (Review::PinBeforeMoves), which such a pin outlives.
Approval Holding(const Approval* stored, const RecordKey& key, int live_fd, int upper_fd, bool moving) {
  Approval approval;
  approval.root = key.first;
  approval.path = key.second;
  // Only a stored decision needs its change's fingerprint now (a pending change gets one when
  // it is decided): two stats per decided change, none per pending one.
  if (!stored) return approval;
  if (moving && PinnedForMoveHolds(stored->fingerprint, live_fd, upper_fd, key.second)) return *stored;
  approval.fingerprint = ChangeFingerprint(live_fd, upper_fd, key.second);
  if (stored->fingerprint == approval.fingerprint) approval = *stored;
  return approval;
}

/// Back to pending, keeping the fingerprint.
void MakePending(Approval& approval) {
  Approval pending;
  pending.root = approval.root;
  pending.path = std::move(approval.path);
  pending.fingerprint = std::move(approval.fingerprint);
  approval = std::move(pending);
}

}  // namespace

SandboxRenames Review::StreamedRenames(const SandboxReader& sandbox, const std::vector<RootChanges>& deletions) {
  if (!find_renames_) return {};
  // Only additions of files and symlinks of a size some deleted one has can be the other half
  // (renames.h): those are kept from a second pass, the rest of the change set is not.
  std::vector<RootChanges> halves;
  for (const auto& root : deletions) {
    if (root.changes.empty()) continue;
    UniqueFd live = sandbox.OpenLiveRoot(root.root), upper = sandbox.OpenUpper(root.root);
    std::set<std::pair<EntryType, off_t>> sizes;
    ParentDirs lives(live.get());
    for (const auto& change : root.changes)
      if (auto st = StatBeneath(lives, change.path)) sizes.insert({EntryTypeFromMode(st->st_mode), st->st_size});
    if (sizes.empty()) continue;
    RootChanges candidates{root.root, {}};
    ParentDirs uppers(upper.get());
    auto deleted = root.changes.begin();
    sandbox.StreamChanges(root.root, [&](Change&& change) {
      if (change.kind != ChangeKind::kAdded || !MayBeRenamed(change.new_type)) return;
      auto st = StatBeneath(uppers, change.path);
      if (!st || !sizes.count({EntryTypeFromMode(st->st_mode), st->st_size})) return;
      // In path order, the deletions among them (as a scan gives them).
      for (; deleted != root.changes.end() && deleted->path < change.path; ++deleted) candidates.changes.push_back(*deleted);
      candidates.changes.push_back(std::move(change));
    });
    if (candidates.changes.empty()) continue;
    for (; deleted != root.changes.end(); ++deleted) candidates.changes.push_back(*deleted);
    halves.push_back(std::move(candidates));
  }
  if (halves.empty()) return {};
  return find_renames_(sandbox, halves);
}

void Review::ForEach(const SandboxReader& sandbox, const std::function<void(ReviewedChange&&)>& visit, bool moving) {
  // First pass per root: its hard links linked up, and the deletions that may be halves of
  // renames; renames are known before the stream starts (the deleted half comes first or
  // last, in path order).
  std::vector<RootChanges> deletions;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) deletions.push_back({i, sandbox.PrepareStream(i)});
  SandboxRenames renames = StreamedRenames(sandbox, deletions);
  std::vector<UniqueFd> lives, uppers;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    lives.push_back(sandbox.OpenLiveRoot(i));
    uppers.push_back(sandbox.OpenUpper(i));
  }
  // Each rename half's partner, and whether its decision holds for the rename: halves decided
  // apart (a deletion approved before the file turned up elsewhere) were decided on something
  // else than this rename, and it is pending until decided as one.
  std::map<RecordKey, std::pair<std::string, bool>> halves;  // {root, path} → {partner, decided apart}
  if (!renames.empty()) {
    for (const auto& [root, pairs] : renames)
      for (const auto& rename : pairs) {
        halves[{root, rename.from}] = {rename.to, false};
        halves[{root, rename.to}] = {rename.from, false};
      }
    auto stored = store_.Lookup(sandbox.id());
    std::map<RecordKey, Approval> holding;
    for (const auto& [key, half] : halves) holding[key] = Holding(stored.Find(key), key, lives[key.first].get(), uppers[key.first].get(), moving);
    for (auto& [key, half] : halves) {
      const Approval& mine = holding[key];
      const Approval& other = holding[{key.first, half.first}];
      half.second = mine.State() != other.State() || !mine.hunks.empty() || !other.hunks.empty();
    }
  }
  auto stored = store_.Lookup(sandbox.id());
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    sandbox.StreamChangesTimed(i, [&](Change&& change, const UpperEntry& seen) {
      RecordKey key{i, change.path};
      ReviewedChange item{i, std::move(change), Holding(stored.Find(key), key, lives[i].get(), uppers[i].get(), moving), {}, {}};
      if (HasSize(item.change.old_type)) item.old_size = seen.old_size;
      if (HasSize(item.change.new_type)) item.new_size = seen.new_size;
      std::string partner;
      if (auto half = halves.find(key); half != halves.end()) {
        partner = half->second.first;
        (item.change.kind == ChangeKind::kDeleted ? item.renamed_to : item.renamed_from) = partner;
        if (half->second.second) MakePending(item.approval);
      }
      // A decision holds for the change it was made on, and which rename a change is half of
      // is part of it: "renamed a -> b" approved is not "deleted a" approved once b has gone,
      // nor is "added b" rejected a rejection of the rename that later pairs it with a deletion.
      if (item.approval.partner != partner) {
        MakePending(item.approval);
        item.approval.partner = partner;  // what a decision made now is made on
      }
      visit(std::move(item));
    });
  }
}

size_t Review::Decide(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool all, Verdict verdict,
                      const HunkCounter& count_hunks, const ContentDigester& bind) {
  // The change set is read as a stream, and only the decisions made now are written: what this
  // holds and writes grows with what the selectors name, never with the rest of a change set of
  // a million (a decision the stream shows as not holding any more reads so whether its row
  // stays or not: Holding).
  constexpr size_t kBatch = 4096;
  if (all) {
    if (!selectors.empty()) throw Error(Code::kInvalidArgument, "name changes of sandbox " + sandbox.id() + " or ask for all of them, not both");
    // Saved a batch at a time, each in a transaction of its own: holding the store for one
    // transaction over the whole stream would stop every other sandbox's calls meanwhile. A
    // failure midway says how many were decided.
    std::vector<Approval> batch;
    size_t decided = 0;
    auto save = [&] {
      FillFingerprints(sandbox, batch);
      BindContent(batch, bind);
      store_.Save(sandbox.id(), batch);
      decided += batch.size();
      batch.clear();
    };
    try {
      ForEach(sandbox, [&](ReviewedChange&& item) {
        // Content its owner could not be shown is approved only by its own name.
        if (verdict == Verdict::kApproved && UnreadableByOwner(item.change)) return;
        item.approval.DecideWhole(verdict);
        batch.push_back(std::move(item.approval));
        if (batch.size() >= kBatch) save();
      });
      save();
    } catch (const Error& e) {
      if (decided == 0) throw;
      throw Error(e.code(), std::to_string(decided) + " changes of sandbox " + sandbox.id() + " were " +
                                std::string(ToString(verdict)) + " before this stopped it: " + e.what());
    }
    return decided;
  }
  if (selectors.empty()) throw Error(Code::kInvalidArgument, "name at least one change of sandbox " + sandbox.id() + " (PATH or PATH:N), or all of them");

  // A selector names a whole change (or directory) or a hunk or part, never either: they come
  // structured (selector.h), so a file called "a:2" is never taken for hunk 2 of "a". The
  // changes named are kept (by key, in stream order), and every rename half (few), whose
  // partner a selector may name.
  std::map<RecordKey, ReviewedChange> named, halves;
  std::set<RecordKey> whole;                             // changes a whole-change reading names
  std::set<size_t> named_whole;                          // whole-change selectors that name something
  std::map<size_t, std::pair<RecordKey, api::HunkRef>> hunk_of;   // selector → {change, hunk or part}
  api::SelectorIndex index(selectors);
  // A repository's data is decided whole (git_data.h): naming a part of it is refused.
  GitUnitTally git([&](const GitUnit& unit) {
    const std::string prefix = sandbox.PathPrefix(unit.root), shown = prefix + unit.git_dir;
    throw Error(Code::kInvalidArgument, prefix + unit.first_chosen + " is " + (unit.in_part ? "a part of " : "") + std::to_string(unit.chosen) +
                                            " of the " + std::to_string(unit.members) + " changes of the git data in " + shown +
                                            " of sandbox " + sandbox.id() +
                                            ", which is decided whole (a git commit lands with its objects, refs and index or not "
                                            "at all): name " + shown + " instead");
  });
  ForEach(sandbox, [&](ReviewedChange&& item) {
    std::string shown = DisplayPath(item.change, sandbox.PathPrefix(item.root));
    RecordKey key{item.root, item.change.path};
    git.Seen(item.root, item.change.path);
    bool keep = false;
    // Content its owner could not be shown is approved only by its own name, never through a
    // directory above it.
    const bool decidable = verdict != Verdict::kApproved || !UnreadableByOwner(item.change) || index.NamesExactly(shown);
    index.ForEachNaming(shown, [&](size_t s) {
      named_whole.insert(s);
      keep |= decidable;
    });
    if (keep) {
      whole.insert(key);
      git.Chosen(item.root, item.change.path);
    }
    for (const auto& [s, hunk] : index.HunksOf(shown)) {
      hunk_of[s] = {key, hunk};
      keep = true;
      git.Chosen(item.root, item.change.path, /*in_part=*/true);
    }
    bool half = !item.renamed_from.empty() || !item.renamed_to.empty();
    if (half) halves.emplace(key, item);
    if (keep) named.emplace(std::move(key), std::move(item));
  });
  git.Finish();
  for (size_t s = 0; s < selectors.size(); ++s) {
    if (named_whole.count(s)) {
      hunk_of.erase(s);
      continue;
    }
    if (!hunk_of.count(s)) throw Error(Code::kNotFound, "no change at '" + api::ToString(selectors[s]) + "' in sandbox " + sandbox.id());
  }
  // The other half of a rename named whole is decided with it.
  for (const RecordKey& key : std::set<RecordKey>(whole)) {
    const ReviewedChange& item = named.at(key);
    const std::string& partner = item.renamed_from.empty() ? item.renamed_to : item.renamed_from;
    if (partner.empty()) continue;
    RecordKey partner_key{key.first, partner};
    if (auto other = halves.find(partner_key); other != halves.end()) {
      named.emplace(partner_key, other->second);
      whole.insert(partner_key);
    }
  }
  halves.clear();

  HunkCounts counts;
  if (!hunk_of.empty()) {
    std::map<size_t, RootChanges> asked;
    bool with_parts = false;
    for (const auto& [s, target] : hunk_of) {
      with_parts |= target.second.part > 0;
      const auto& item = named.at(target.first);
      asked[item.root].root = item.root;
      asked[item.root].changes.push_back(item.change);
    }
    std::vector<RootChanges> roots;
    for (auto& [root, changes] : asked) roots.push_back(std::move(changes));
    counts = count_hunks(roots, with_parts);
  }

  size_t decided = 0;
  for (const auto& key : whole) {
    named.at(key).approval.DecideWhole(verdict);
    ++decided;
  }
  for (const auto& [s, target] : hunk_of) {
    auto& item = named.at(target.first);
    std::string shown = DisplayPath(item.change, sandbox.PathPrefix(item.root));
    auto it = counts.find(target.first);
    const HunkShape shape = it == counts.end() ? HunkShape{} : it->second;
    const int count = shape.hunks;
    const api::HunkRef ref = target.second;
    if (count < 0)
      throw Error(Code::kInvalidArgument, shown + " is not a text modification and is approved or rejected whole; name it without ':" +
                                              api::ToString(ref) + "'");
    if (ref.hunk < 1 || ref.hunk > count)
      throw Error(Code::kNotFound, shown + " has " + std::to_string(count) + (count == 1 ? " hunk" : " hunks") +
                                       "; there is no hunk " + std::to_string(ref.hunk) + " in sandbox " + sandbox.id());
    if (ref.part == 0) {
      item.approval.DecideHunk(ref.hunk, count, verdict);
    } else {
      int parts = static_cast<size_t>(ref.hunk) <= shape.parts.size() ? shape.parts[static_cast<size_t>(ref.hunk - 1)] : 0;
      if (ref.part > parts)
        throw Error(Code::kNotFound, "hunk " + std::to_string(ref.hunk) + " of " + shown + " has " + std::to_string(parts) +
                                         (parts == 1 ? " part" : " parts") + "; there is no part " + std::to_string(ref.part) +
                                         " in sandbox " + sandbox.id());
      item.approval.DecidePart(ref.hunk, ref.part, count, parts, verdict);
    }
    ++decided;
  }
  // All or nothing: every selector was checked above, so the decisions go in one transaction.
  std::vector<Approval> changed;
  for (auto& [key, item] : named) changed.push_back(std::move(item.approval));
  named.clear();
  FillFingerprints(sandbox, changed);
  BindContent(changed, bind);
  store_.Save(sandbox.id(), changed);
  return decided;
}

OutlookTally::OutlookTally(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending)
    : sandbox_(sandbox), selectors_(selectors), index_(selectors), used_(selectors.size(), false), approve_pending_(approve_pending) {}

void OutlookTally::Add(ReviewedChange item) {
  ++outlook_.changes;
  outlook_.uncommittable |= !IsCommittable(item.change);
  if (!item.renamed_from.empty()) outlook_.renames[{item.root, item.change.path}] = item.renamed_from;
  bool named = selectors_.empty();
  const std::string shown = DisplayPath(item.change, sandbox_.PathPrefix(item.root));
  index_.ForEachNaming(shown, [&](size_t s) { named = used_[s] = true; });
  const std::string& partner = !item.renamed_from.empty() ? item.renamed_from : item.renamed_to;
  if (named && !partner.empty()) named_halves_.insert({item.root, item.change.path});
  if (!named && partner.empty()) all_taken_whole_ = false;
  if (!named && !partner.empty()) partners_needed_.insert({item.root, partner});
  // (A half named through its partner is approved with it, as ApprovePending does.)
  if (approve_pending_ && MayApproveUnseen(item.change, index_, shown)) item.approval.ApprovePending();
  all_taken_whole_ &= item.approval.CommitsAll();
  bool taken_named = named || (!partner.empty() && index_.AnyNames(sandbox_.PathPrefix(item.root) + partner));
  if (taken_named && (item.approval.CommitsWhole() || item.approval.CommitsPart())) ++outlook_.taken;
}

CommitOutlook OutlookTally::Finish() {
  for (size_t s = 0; s < selectors_.size(); ++s)
    if (!used_[s]) throw Error(Code::kNotFound, "no change at '" + api::ToString(selectors_[s]) + "' in sandbox " + sandbox_.id());
  bool everything = all_taken_whole_ && outlook_.changes > 0;
  for (const auto& key : partners_needed_) everything &= named_halves_.count(key) > 0;
  outlook_.everything = everything;
  return std::move(outlook_);
}

CommitOutlook Review::Outlook(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending) {
  OutlookTally tally(sandbox, selectors, approve_pending);
  ForEach(sandbox, [&](ReviewedChange&& item) { tally.Add(std::move(item)); });
  return tally.Finish();
}

}  // namespace sandboxd

namespace sandboxd {

CommitSelection Review::Selection(const SandboxReader& sandbox, const std::vector<ReviewedChange>& reviewed,
                                  const std::vector<api::Selector>& selectors, bool approve_pending) {
  CommitSelection request;
  std::map<size_t, size_t> root_index;
  SelectionStream stream(sandbox, selectors, approve_pending, [&](TakenChange&& taken) {
    auto [at, fresh] = root_index.try_emplace(taken.root, request.changes.size());
    if (fresh) request.changes.push_back({taken.root, {}});
    if (!taken.hunks.empty()) request.hunks[{taken.root, taken.change.path}] = std::move(taken.hunks);
    request.changes[at->second].changes.push_back(std::move(taken.change));
  });
  for (const auto& item : reviewed) stream.Add(item);
  request.renames = stream.Finish();
  request.everything = stream.taken() == reviewed.size() && request.hunks.empty();
  return request;
}

TakenRenames Review::StreamTaken(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending,
                                 int64_t commit, const std::function<void(TakenChange&&)>& take, const ShapeLeft& shape_left) {
  std::vector<Approval> left;  // of the files partly committed (few)
  SelectionStream selection(sandbox, selectors, approve_pending, [&](TakenChange&& taken) {
    if (!taken.hunks.empty()) {
      std::optional<std::vector<int>> shape;
      if (shape_left && SplitsWhatIsLeft(taken.approval, taken.hunks)) shape = shape_left(taken.root, taken.change, taken.hunks);
      left.push_back(ApprovalLeft(taken.approval, taken.hunks, shape ? &*shape : nullptr));
    }
    take(std::move(taken));
  });
  ForEach(sandbox, [&](ReviewedChange&& item) { selection.Add(std::move(item)); }, true);
  TakenRenames renames = selection.Finish();
  // Before anything goes live (the stage is not live): they wait for the commit's outcome.
  if (!left.empty()) store_.SaveAfterCommit(sandbox.id(), commit, left);
  return renames;
}

void Review::AfterCommit(const SandboxReader& sandbox, int64_t commit, bool whole_upper, CommitJournal& journal) {
  if (whole_upper) {
    store_.ForgetAll(sandbox.id());
    Settle(sandbox, commit, true);
    return;
  }
  // What went live is what its steps name (a move names both halves of its rename); a page at
  // a time. The decisions a partly committed file keeps come back in Settle.
  std::vector<std::pair<size_t, std::string>> gone;
  journal.ForEachStepPage(commit, false, 4096, [&](const std::vector<CommitStep>& steps) {
    gone.clear();
    for (const auto& step : steps) {
      gone.push_back({step.root, step.path});
      if (!step.from.empty()) gone.push_back({step.root, step.from});
    }
    store_.Forget(sandbox.id(), gone);
  });
  Settle(sandbox, commit, true);
}

void Review::SettleAwaitedCommits(const SandboxReader& sandbox, CommitJournal& journal) {
  for (int64_t commit : store_.CommitsAwaited(sandbox.id())) {
    auto state = journal.StateOf(commit);
    // Still under way (a restart settles it): its outcome is not known yet.
    if (state && (*state == CommitState::kPlanning || *state == CommitState::kStaging || *state == CommitState::kApplying ||
                  *state == CommitState::kApplied))
      continue;
    Settle(sandbox, commit, state && *state != CommitState::kRolledBack);
  }
}

void Review::Settle(const SandboxReader& sandbox, int64_t commit, bool went_live) {
  // The hunks left of a partly committed file keep their decisions (rejected stays rejected),
  // under the fingerprint the file has now. Read, then kept and forgotten at once: forgotten
  // first, a kill before they were kept lost them (seen in CommitCrashTest under load).
  std::vector<Approval> left;
  if (went_live) left = store_.AfterCommitOf(sandbox.id(), commit);
  FillFingerprints(sandbox, left);
  store_.SettleAfterCommit(sandbox.id(), commit, left);
}

}  // namespace sandboxd
