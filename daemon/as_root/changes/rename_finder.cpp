#include "changes/rename_finder.h"

#include "helper_clients/helper_client.h"

namespace sandboxd {

SandboxRenames FindRenames(OwnerHelpers& helpers, const SandboxReader& sandbox, const std::vector<RootChanges>& scan) {
  std::vector<UniqueFd> fds;
  std::vector<RenameRoot> asked;
  std::vector<size_t> asked_roots;
  for (const auto& root : scan) {
    if (!MayHaveRenames(root.changes)) continue;
    UniqueFd live = sandbox.OpenLiveRoot(root.root), upper = sandbox.OpenUpper(root.root);
    RenameCandidates candidates = ProposeRenames(live.get(), upper.get(), root.changes);
    if (candidates.empty()) continue;
    asked.push_back({live.get(), upper.get(), std::move(candidates)});
    asked_roots.push_back(root.root);
    fds.push_back(std::move(live));
    fds.push_back(std::move(upper));
  }
  SandboxRenames renames;
  if (asked.empty()) return renames;
  auto confirmed = ConfirmRenamesAsOwner(helpers, LookupUser(sandbox.owner()), asked);
  for (size_t i = 0; i < asked.size(); ++i)
    if (!confirmed[i].empty()) renames[asked_roots[i]] = std::move(confirmed[i]);
  return renames;
}

}  // namespace sandboxd
