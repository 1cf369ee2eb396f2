#include "live_conflicts.h"

#include <set>

#include "conflict_check.h"
#include "fd.h"
#include "helper_client.h"

namespace sandboxd {

Conflicts FindConflicts(const Sandbox& sandbox, const std::vector<RootChanges>& changes, const Sights& sights,
                        int64_t since_usec, const std::string& helper_path, const UserCredentials& owner) {
  Conflicts conflicts;
  for (const auto& root : changes) {
    if (root.changes.empty()) continue;
    std::map<std::string, std::string> seen;
    for (auto it = sights.lower_bound({root.root, std::string()}); it != sights.end() && it->first.first == root.root; ++it)
      seen[it->first.second] = it->second;
    UniqueFd live = sandbox.OpenLiveRoot(root.root), upper = sandbox.OpenUpper(root.root);
    auto candidates = FindConflictCandidates(live.get(), upper.get(), root.changes, seen, since_usec * 1000);
    std::vector<std::string> comparable;
    for (const auto& candidate : candidates)
      if (candidate.same_content_possible) comparable.push_back(candidate.path);
    std::set<std::string> same;
    if (!comparable.empty()) same = SameContentAsOwner(helper_path, owner, live.get(), upper.get(), comparable);
    for (const auto& candidate : candidates)
      if (!same.count(candidate.path)) conflicts[{root.root, candidate.path}] = candidate.why;
  }
  return conflicts;
}

}  // namespace sandboxd
