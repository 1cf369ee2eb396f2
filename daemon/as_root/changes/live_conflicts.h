#pragma once
/// The conflicts of a sandbox's changes with the live tree now, and why: the candidates that
/// the metadata gives (conflict_check.h), less those whose live file already holds what the
/// sandbox holds (both made the same change). That comparison reads both files, so the helper
/// makes it as the owner: the answer never tells the owner anything about a file they could not
/// read. Used by a commit (which refuses them unless forced) and by the change listing, the
/// diff and the review (which mark them before a commit is tried).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"
#include "changes/conflict_check.h"
#include "sandbox/live_sight.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"
#include "helper_clients/owner_helpers.h"

namespace sandboxd {

using Conflicts = std::map<std::pair<size_t, std::string>, std::string>;  ///< {root, path} → why

/// `since_usec`: when the sandbox last agreed with the live tree (for changes without a sight).
/// The sights (and what live git indexes staged at them: git_index_sights.h) come from `sights`.
Conflicts FindConflicts(const SandboxReader& sandbox, const std::vector<RootChanges>& changes, SightStore& sights, int64_t since_usec,
                        OwnerHelpers& helpers, const UserCredentials& owner);

/// FindConflicts for a change set read a page at a time in {root, path} order (a streaming
/// listing, Review::ForEach), with the sights read along (ordered_lookup.h): what it holds grows
/// with a page, never with the change set.
class StreamedConflicts {
 public:
  StreamedConflicts(const SandboxReader& sandbox, SightStore& sights, int64_t since_usec, OwnerHelpers& helpers, UserCredentials owner);
  /// The conflicts among `page`, the changes of the stream after those of the last call, once
  /// the settling of a job that just ended has stored their sights
  /// (Sandbox::WaitSettledThrough); they are read afresh for each page.
  Conflicts Of(const std::vector<RootChanges>& page);

 private:
  const SandboxReader& sandbox_;
  SightStore& store_;
  OrderedLookup<std::string> sights_;
  int64_t since_usec_;
  OwnerHelpers& helpers_;
  UserCredentials owner_;
  std::vector<UniqueFd> lives_, uppers_;
  std::map<size_t, std::set<Inode>> moved_;  ///< per root, once asked
};

}  // namespace sandboxd
