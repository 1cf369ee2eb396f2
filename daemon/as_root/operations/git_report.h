#pragma once
/// What a sandbox did to the history of the repositories in its roots, told to its owner: the
/// line `changes` folds a repository's data into (git_data.h), read by the text helper as the
/// owner from both layers (helpers/git_summary.h).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "operations/operation_parts.h"

namespace sandboxd {

class SandboxReader;

/// Repositories one call may ask about.
inline constexpr size_t kMostGitSummaries = 100;

/// For each of `git_dirs` (the ".git" directory of a work tree as `changes` names it: "N/" first
/// in a sandbox of several roots), its summary (GitSummary's fields). Refuses with
/// Error(kInvalidArgument) a name that is no ".git" directory of a root, or more than
/// kMostGitSummaries of them; Error(kInvalidState) in a sandbox that is not active.
std::vector<nlohmann::json> SummarizeRepositories(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<std::string>& git_dirs);

}  // namespace sandboxd
