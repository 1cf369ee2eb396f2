#include "review.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "beneath.h"
#include "change_selection.h"
#include "errors.h"
#include "selector.h"

namespace sandboxd {
namespace {

using Key = std::pair<size_t, std::string>;
constexpr size_t kNoPartner = static_cast<size_t>(-1);

/// For each change, the index of the other half of its rename, or kNoPartner.
std::vector<size_t> RenamePartners(const std::vector<ReviewedChange>& reviewed) {
  std::map<Key, size_t> index;
  for (size_t c = 0; c < reviewed.size(); ++c) index[{reviewed[c].root, reviewed[c].change.path}] = c;
  std::vector<size_t> partner(reviewed.size(), kNoPartner);
  for (size_t c = 0; c < reviewed.size(); ++c) {
    const std::string& other = !reviewed[c].renamed_from.empty() ? reviewed[c].renamed_from : reviewed[c].renamed_to;
    if (other.empty()) continue;
    auto it = index.find({reviewed[c].root, other});
    if (it != index.end()) partner[c] = it->second;
  }
  return partner;
}

/// A selector naming one half of a rename names the other too: a rename is decided whole.
void NamePartners(const std::vector<ReviewedChange>& reviewed, std::vector<bool>& named) {
  auto partner = RenamePartners(reviewed);
  std::vector<bool> halves = named;
  for (size_t c = 0; c < reviewed.size(); ++c)
    if (halves[c] && partner[c] != kNoPartner) named[partner[c]] = true;
}

/// Which of `reviewed` the whole-change selectors name (all without selectors); a selector
/// naming nothing is refused.
std::vector<bool> Named(const Sandbox& sandbox, const std::vector<ReviewedChange>& reviewed,
                        const std::vector<std::string>& selectors) {
  std::vector<bool> named(reviewed.size(), selectors.empty());
  api::SelectorIndex index(selectors);
  std::vector<bool> used(selectors.size(), false);
  for (size_t c = 0; c < reviewed.size(); ++c)
    index.ForEachNaming(DisplayPath(reviewed[c].change, sandbox.PathPrefix(reviewed[c].root)), [&](size_t s) { named[c] = used[s] = true; });
  for (size_t s = 0; s < selectors.size(); ++s)
    if (!used[s]) throw Error(Code::kNotFound, "no change at '" + selectors[s] + "' in sandbox " + sandbox.id());
  NamePartners(reviewed, named);
  return named;
}

/// Gives every decided approval without one the fingerprint of its change as it is now.
void FillFingerprints(const Sandbox& sandbox, std::vector<Approval>& approvals) {
  std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;
  for (auto& approval : approvals) {
    if (!approval.fingerprint.empty() || (approval.hunks.empty() && approval.whole == Verdict::kPending)) continue;
    auto& fds = roots[approval.root];
    if (!fds.first) fds = {sandbox.OpenLiveRoot(approval.root), sandbox.OpenUpper(approval.root)};
    approval.fingerprint = ChangeFingerprint(fds.first.get(), fds.second.get(), approval.path);
  }
}

}  // namespace

std::vector<ReviewedChange> Review::Current(const Sandbox& sandbox) {
  std::map<Key, Approval> decided;
  for (auto& approval : store_.Load(sandbox.id())) decided[{approval.root, approval.path}] = std::move(approval);
  std::vector<ReviewedChange> reviewed;
  std::vector<UniqueFd> lives, uppers;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    lives.push_back(sandbox.OpenLiveRoot(i));
    uppers.push_back(sandbox.OpenUpper(i));
  }
  for (auto& root : sandbox.Scan()) {
    for (auto& change : root.changes) {
      ReviewedChange item{root.root, std::move(change), {}, {}, {}};
      item.approval.root = root.root;
      item.approval.path = item.change.path;
      // Only a stored decision needs its change's fingerprint now (a pending change gets one
      // when it is decided): two stats per decided change, none per pending one.
      auto it = decided.find({root.root, item.change.path});
      if (it != decided.end()) {
        item.approval.fingerprint = ChangeFingerprint(lives[root.root].get(), uppers[root.root].get(), item.change.path);
        // A decision made on other content does not hold: the change is pending again.
        if (it->second.fingerprint == item.approval.fingerprint) item.approval = it->second;
      }
      reviewed.push_back(std::move(item));
    }
  }
  if (find_renames_) MarkRenames(sandbox, reviewed);
  // A decision holds for the change it was made on, and which rename a change is half of is
  // part of it: "renamed a -> b" approved is not "deleted a" approved once b has gone, nor is
  // "added b" rejected a rejection of the rename that later pairs it with a deletion.
  for (auto& item : reviewed) {
    std::string partner = !item.renamed_from.empty() ? item.renamed_from : item.renamed_to;
    if (item.approval.partner != partner) {
      std::string fingerprint = item.approval.fingerprint;
      item.approval = Approval{};
      item.approval.root = item.root;
      item.approval.path = item.change.path;
      item.approval.fingerprint = fingerprint;
      item.approval.partner = partner;  // what a decision made now is made on
    }
  }
  return reviewed;
}

void Review::MarkRenames(const Sandbox& sandbox, std::vector<ReviewedChange>& reviewed) {
  // Only deletions and additions of files and symlinks can be halves of a rename: the others
  // are not copied (a change set may be a million long).
  std::vector<RootChanges> scan;
  for (const auto& item : reviewed) {
    const Change& change = item.change;
    if (!(change.kind == ChangeKind::kDeleted && MayBeRenamed(change.old_type)) &&
        !(change.kind == ChangeKind::kAdded && MayBeRenamed(change.new_type)))
      continue;
    if (scan.empty() || scan.back().root != item.root) scan.push_back({item.root, {}});
    scan.back().changes.push_back(change);
  }
  SandboxRenames renames = find_renames_(sandbox, scan);
  if (renames.empty()) return;
  std::map<Key, size_t> index;
  for (size_t c = 0; c < reviewed.size(); ++c) index[{reviewed[c].root, reviewed[c].change.path}] = c;
  for (const auto& [root, pairs] : renames) {
    for (const auto& rename : pairs) {
      auto from = index.find({root, rename.from}), to = index.find({root, rename.to});
      if (from == index.end() || to == index.end()) continue;
      ReviewedChange& deleted = reviewed[from->second];
      ReviewedChange& added = reviewed[to->second];
      deleted.renamed_to = rename.to;
      added.renamed_from = rename.from;
      // Halves decided apart (a deletion approved before the file turned up elsewhere) were
      // decided on something else than this rename: it is pending until decided as one.
      if (deleted.approval.State() != added.approval.State() || !deleted.approval.hunks.empty() ||
          !added.approval.hunks.empty()) {
        for (ReviewedChange* half : {&deleted, &added}) {
          std::string fingerprint = half->approval.fingerprint;
          half->approval = Approval{};
          half->approval.root = half->root;
          half->approval.path = half->change.path;
          half->approval.fingerprint = fingerprint;
        }
      }
    }
  }
}

size_t Review::Decide(const Sandbox& sandbox, const std::vector<std::string>& selectors, bool all, Verdict verdict,
                      const HunkCounter& count_hunks) {
  auto current = Current(sandbox);
  if (all) {
    if (!selectors.empty()) throw Error(Code::kInvalidArgument, "name changes of sandbox " + sandbox.id() + " or ask for all of them, not both");
    std::vector<Approval> changed;
    for (auto& item : current) {
      item.approval.DecideWhole(verdict);
      changed.push_back(item.approval);
    }
    FillFingerprints(sandbox, changed);
    store_.Save(sandbox.id(), changed);
    return changed.size();
  }
  if (selectors.empty()) throw Error(Code::kInvalidArgument, "name at least one change of sandbox " + sandbox.id() + " (PATH or PATH:N), or all of them");

  // Whole-change readings first: a file may itself be called "a:2".
  std::map<size_t, std::set<size_t>> whole;            // selector → indices of changes
  std::map<size_t, std::pair<size_t, int>> hunk_of;    // selector → {change index, hunk}
  api::SelectorIndex index(selectors);
  for (size_t c = 0; c < current.size(); ++c) {
    std::string shown = DisplayPath(current[c].change, sandbox.PathPrefix(current[c].root));
    index.ForEachNaming(shown, [&](size_t s) { whole[s].insert(c); });
    for (const auto& [s, hunk] : index.HunksOf(shown)) hunk_of[s] = {c, hunk};
  }
  for (size_t s = 0; s < selectors.size(); ++s) {
    if (whole.count(s)) {
      hunk_of.erase(s);
      continue;
    }
    if (!hunk_of.count(s)) throw Error(Code::kNotFound, "no change at '" + selectors[s] + "' in sandbox " + sandbox.id());
  }

  HunkCounts counts;
  if (!hunk_of.empty()) {
    std::map<size_t, RootChanges> asked;
    for (const auto& [s, target] : hunk_of) {
      const auto& item = current[target.first];
      asked[item.root].root = item.root;
      asked[item.root].changes.push_back(item.change);
    }
    std::vector<RootChanges> roots;
    for (auto& [root, changes] : asked) roots.push_back(std::move(changes));
    counts = count_hunks(roots);
  }

  auto partner = RenamePartners(current);
  for (auto& [s, indices] : whole)
    for (size_t c : std::set<size_t>(indices))
      if (partner[c] != kNoPartner) indices.insert(partner[c]);
  size_t decided = 0;
  for (const auto& [s, indices] : whole)
    for (size_t c : indices) {
      current[c].approval.DecideWhole(verdict);
      ++decided;
    }
  for (const auto& [s, target] : hunk_of) {
    auto& item = current[target.first];
    std::string shown = DisplayPath(item.change, sandbox.PathPrefix(item.root));
    auto it = counts.find({item.root, item.change.path});
    int count = it == counts.end() ? -1 : it->second;
    if (count < 0)
      throw Error(Code::kInvalidArgument, shown + " is not a text modification and is approved or rejected whole; name it without ':" +
                                              std::to_string(target.second) + "'");
    if (target.second < 1 || target.second > count)
      throw Error(Code::kNotFound, shown + " has " + std::to_string(count) + (count == 1 ? " hunk" : " hunks") +
                                       "; there is no hunk " + std::to_string(target.second) + " in sandbox " + sandbox.id());
    item.approval.DecideHunk(target.second, count, verdict);
    ++decided;
  }
  std::vector<Approval> changed;
  for (const auto& item : current) changed.push_back(item.approval);
  FillFingerprints(sandbox, changed);
  store_.Save(sandbox.id(), changed);
  return decided;
}

void Review::ApprovePending(const Sandbox& sandbox, std::vector<ReviewedChange>& reviewed,
                            const std::vector<std::string>& selectors) {
  auto named = Named(sandbox, reviewed, selectors);
  for (size_t c = 0; c < reviewed.size(); ++c) {
    if (!named[c]) continue;
    Approval& approval = reviewed[c].approval;
    if (approval.State() == ReviewState::kPending) {
      approval.DecideWhole(Verdict::kApproved);
    } else if (approval.State() == ReviewState::kPartial) {
      for (int hunk : approval.HunksWith(Verdict::kPending)) approval.DecideHunk(hunk, approval.hunk_count, Verdict::kApproved);
    }
  }
}

}  // namespace sandboxd

namespace sandboxd {

CommitRequest Review::Selection(const Sandbox& sandbox, const std::vector<ReviewedChange>& reviewed,
                                const std::vector<std::string>& selectors) {
  CommitRequest request;
  std::set<std::pair<size_t, std::string>> taken;
  auto named = Named(sandbox, reviewed, selectors);
  for (size_t c = 0; c < reviewed.size(); ++c) {
    if (!named[c]) continue;
    const auto& item = reviewed[c];
    if (item.approval.CommitsWhole()) {
      taken.insert({item.root, item.change.path});
    } else if (item.approval.CommitsPart()) {
      taken.insert({item.root, item.change.path});
      if (item.approval.hunks.size() == item.approval.ApprovedHunks().size()) continue;
      request.hunks[{item.root, item.change.path}] = item.approval.ApprovedHunks();
    }
  }
  // A change needs its parent directories live: new directories above a taken change go along.
  std::map<std::pair<size_t, std::string>, const ReviewedChange*> by_path;
  for (const auto& item : reviewed) by_path[{item.root, item.change.path}] = &item;
  for (const auto& key : std::set<std::pair<size_t, std::string>>(taken)) {
    std::string path = key.second;
    for (size_t slash = path.rfind('/'); slash != std::string::npos; slash = path.rfind('/')) {
      path.resize(slash);
      auto it = by_path.find({key.first, path});
      if (it == by_path.end() || it->second->change.new_type != EntryType::kDirectory) continue;
      if (it->second->change.kind == ChangeKind::kModeChanged) continue;
      if (it->second->approval.State() == ReviewState::kRejected)
        throw Error(Code::kInvalidArgument, sandbox.PathPrefix(key.first) + key.second + " is approved but the directory " +
                                                sandbox.PathPrefix(key.first) + it->first.second +
                                                " it needs is rejected; approve the directory or reject the file");
      taken.insert(it->first);
    }
  }
  std::map<size_t, size_t> root_index;
  for (const auto& item : reviewed) {
    if (!taken.count({item.root, item.change.path})) continue;
    if (!root_index.count(item.root)) {
      root_index[item.root] = request.changes.size();
      request.changes.push_back({item.root, {}});
    }
    request.changes[root_index[item.root]].changes.push_back(item.change);
  }
  for (const auto& item : reviewed)
    if (!item.renamed_from.empty() && taken.count({item.root, item.change.path}) && taken.count({item.root, item.renamed_from}))
      request.renames[{item.root, item.change.path}] = item.renamed_from;
  request.everything = taken.size() == reviewed.size() && request.hunks.empty();
  return request;
}

void Review::BeforeCommitMoves(const Sandbox& sandbox, int64_t commit, const std::vector<ReviewedChange>& before,
                               const CommitRequest& request) {
  std::vector<Approval> left;
  for (const auto& item : before) {
    auto it = request.hunks.find({item.root, item.change.path});
    if (it == request.hunks.end()) continue;
    Approval kept = item.approval;
    kept.hunks = RemainingHunks(item.approval, it->second);
    kept.hunk_count = static_cast<int>(kept.hunks.size());
    if (!kept.hunks.empty()) {
      Verdict first = kept.hunks.begin()->second;
      bool same = true;
      for (const auto& [number, verdict] : kept.hunks) same &= verdict == first;
      if (same) kept.DecideWhole(first);
    }
    left.push_back(std::move(kept));
  }
  if (!left.empty()) store_.SaveAfterCommit(sandbox.id(), commit, left);
}

void Review::AfterCommit(const Sandbox& sandbox, int64_t commit, const CommitRequest& request) {
  std::vector<std::pair<size_t, std::string>> gone;
  for (const auto& root : request.changes)
    for (const auto& change : root.changes)
      if (!request.hunks.count({root.root, change.path})) gone.push_back({root.root, change.path});
  store_.Forget(sandbox.id(), gone);
  Settle(sandbox, commit, true);
}

void Review::SettleAwaitedCommits(const Sandbox& sandbox, CommitJournal& journal) {
  for (int64_t commit : store_.CommitsAwaited(sandbox.id())) {
    auto state = journal.StateOf(commit);
    // Still under way (a restart settles it): its outcome is not known yet.
    if (state && (*state == "staging" || *state == "applying" || *state == "applied")) continue;
    Settle(sandbox, commit, state && *state != "rolled-back");
  }
}

void Review::Settle(const Sandbox& sandbox, int64_t commit, bool went_live) {
  std::vector<Approval> left = store_.TakeAfterCommit(sandbox.id(), commit);
  if (!went_live || left.empty()) return;
  // The hunks left of a partly committed file keep their decisions (rejected stays rejected),
  // under the fingerprint the file has now.
  FillFingerprints(sandbox, left);
  store_.Save(sandbox.id(), left);
}

}  // namespace sandboxd
