#include "changes/live_conflicts.h"

#include <set>

#include "unique_fd.h"
#include "changes/conflict_check.h"
#include "changes/git_index_sights.h"
#include "helper_clients/helper_client.h"

namespace sandboxd {

namespace {

/// Of root `root`'s `candidates` (by metadata), those that conflict, into `conflicts`: less the
/// files whose live side holds what the sandbox's does, and the git indexes only refreshed.
void AddConfirmed(SightStore& sights, const SandboxReader& sandbox, OwnerHelpers& helpers, const UserCredentials& owner, size_t root,
                  int live, int upper, const std::map<std::string, std::string>& seen, std::vector<ConflictCandidate> candidates,
                  Conflicts& conflicts) {
  DropRefreshedIndexes(sights, sandbox, helpers, owner, root, live, seen, candidates);
  std::vector<std::string> comparable;
  for (const auto& candidate : candidates)
    if (candidate.same_content_possible) comparable.push_back(candidate.path);
  std::set<std::string> same;
  if (!comparable.empty()) same = SameContentAsOwner(helpers, owner, live, upper, comparable);
  for (const auto& candidate : candidates)
    if (!same.count(candidate.path)) conflicts[{root, candidate.path}] = candidate.why;
}

}  // namespace

Conflicts FindConflicts(const SandboxReader& sandbox, const std::vector<RootChanges>& changes, SightStore& store, int64_t since_usec,
                        OwnerHelpers& helpers, const UserCredentials& owner) {
  Conflicts conflicts;
  const Sights sights = store.Load(sandbox.id());
  for (const auto& root : changes) {
    if (root.changes.empty()) continue;
    std::map<std::string, std::string> seen;
    for (auto it = sights.lower_bound({root.root, std::string()}); it != sights.end() && it->first.first == root.root; ++it)
      seen[it->first.second] = it->second;
    UniqueFd live = sandbox.OpenLiveRoot(root.root), upper = sandbox.OpenUpper(root.root);
    auto candidates = FindConflictCandidates(owner, live.get(), upper.get(), root.changes, seen, since_usec * 1000);
    AddConfirmed(store, sandbox, helpers, owner, root.root, live.get(), upper.get(), seen, std::move(candidates), conflicts);
  }
  return conflicts;
}

StreamedConflicts::StreamedConflicts(const SandboxReader& sandbox, SightStore& sights, int64_t since_usec, OwnerHelpers& helpers,
                                     UserCredentials owner)
    : sandbox_(sandbox),
      store_(sights),
      sights_(sights.Lookup(sandbox.id())),
      since_usec_(since_usec),
      helpers_(helpers),
      owner_(std::move(owner)) {
  for (size_t i = 0; i < sandbox.roots().size(); ++i) {
    lives_.push_back(sandbox.OpenLiveRoot(i));
    uppers_.push_back(sandbox.OpenUpper(i));
  }
}

Conflicts StreamedConflicts::Of(const std::vector<RootChanges>& page) {
  Conflicts conflicts;
  // The sights of a job that just ended may still be on their way (a listing right after it):
  // this page's are waited for, while the settling goes on with the next ones.
  for (auto root = page.rbegin(); root != page.rend(); ++root)
    if (!root->changes.empty()) {
      sandbox_.WaitSettledThrough({root->root, root->changes.back().path}, "read the conflicts of");
      break;
    }
  for (const auto& root : page) {
    if (root.changes.empty()) continue;
    int live = lives_.at(root.root).get(), upper = uppers_.at(root.root).get();
    std::map<std::string, std::string> seen;
    sights_.Forget();  // the settling may have stored more since the last page
    for (const auto& change : root.changes)
      if (const std::string* sight = sights_.Find({root.root, change.path})) seen.emplace(change.path, *sight);
    // Which inodes the sandbox moved needs the whole change set: one more pass over it, with
    // its own reading of the sights, made only when a copy's origin turns up elsewhere.
    MovedInodes moved = [&] {
      auto known = moved_.find(root.root);
      if (known != moved_.end()) return known->second;
      std::set<Inode> inodes;
      sandbox_.WaitSettled("read the conflicts of");  // every sight, not only this page's
      OrderedLookup<std::string> all_sights = store_.Lookup(sandbox_.id());
      sandbox_.StreamChanges(root.root, [&](Change&& change) {
        AddMovedInode(owner_, live, change, all_sights.Find({root.root, change.path}), inodes);
      });
      return moved_[root.root] = std::move(inodes);
    };
    auto candidates = FindConflictCandidates(owner_, live, upper, root.changes, seen, since_usec_ * 1000, moved);
    AddConfirmed(store_, sandbox_, helpers_, owner_, root.root, live, upper, seen, std::move(candidates), conflicts);
  }
  return conflicts;
}

}  // namespace sandboxd
