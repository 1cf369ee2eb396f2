#pragma once
/// What a sandbox's change set is, told to its owner: the changes with their decisions and
/// conflicts (as one list, or as lines of JSON into an fd), and their diff into an fd. None of
/// them holds the change set whole when writing into an fd (it may be a million changes); the
/// diff and the conflicts' content checks are made by the helper, as the owner.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "changes/live_conflicts.h"
#include "changes/reviewed_change.h"
#include "operations/operation_parts.h"
#include "selector.h"

namespace sandboxd {

class RelayedOutput;
class SandboxReader;

/// The conflicts of `reviewed` with the live tree now, once the sights of a job that just ended
/// are in (live_conflicts.h).
Conflicts CurrentConflicts(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<ReviewedChange>& reviewed);

/// The change set as change_listing.h's objects, conflicts marked. Refuses with Error(kTooLarge)
/// naming ListChanges when it holds more than `most_changes` changes, or when their objects take
/// more than about `most_bytes` on the bus (MarshalledBound).
std::vector<nlohmann::json> ListedChanges(const OperationParts& parts, const SandboxReader& sandbox, size_t most_changes, size_t most_bytes);

/// The change set into `out`'s spool as one line of JSON per change (change_listing.h),
/// conflicts marked; returns how many. Throws the call's end when the reader went away, was
/// given up on or fell too far behind (RelayedOutput::Grew).
uint32_t WriteChangeList(const OperationParts& parts, const SandboxReader& sandbox, RelayedOutput& out);

/// How a diff is asked for (Diff's options).
struct DiffAsked {
  bool binary = false;  ///< binary changes as git's binary patches
};

/// The git-style diff of what `selectors` name (all without) into `out`'s spool, a page at a
/// time through the helper (diff_pages.h); throws the call's end as WriteChangeList does.
void WriteDiff(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, const DiffAsked& asked,
               RelayedOutput& out);

}  // namespace sandboxd
