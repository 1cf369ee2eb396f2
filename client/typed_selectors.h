#pragma once
/// Selectors as people type them, turned into the structured ones the bus takes (selector.h).
/// "run.sh:1" could mean hunk 1 of run.sh or a file a job named "run.sh:1": where the change set
/// holds both, it is refused naming both (the person says which with "run.sh:1" in quotes or
/// ./run.sh:1 for the file, "run.sh":1 for the hunk); where it holds one, that one is meant.
/// Pure but for the listing it is given, which it calls only when a typed selector could mean
/// either.

#include <functional>
#include <string>
#include <vector>

#include "selector.h"

namespace sandboxctl {

/// The paths of a sandbox's changes as `changes` shows them (wire names, "N/" root prefixes).
using ChangePaths = std::function<std::vector<std::string>()>;

/// `typed` as selectors of `sandbox` (its id or name, for messages), paths as wire names.
/// Throws UsageError for quoting that does not parse, std::runtime_error for a selector that
/// names a change and a hunk (or part) of another.
std::vector<sandboxd::api::Selector> ResolveTypedSelectors(const std::vector<std::string>& typed, const ChangePaths& list,
                                                           const std::string& sandbox);

/// Commit's selectors: paths only (a commit takes whole changes), as ResolveTypedSelectors reads
/// them but never as a hunk: "run.sh:1" is the path run.sh:1. UsageError for "run.sh":1.
std::vector<sandboxd::api::Selector> TypedPaths(const std::vector<std::string>& typed);

/// How a message names what `selector` reads as: "the file P" or "hunk N of P" or "part M of
/// hunk N of P", P as git quotes it.
std::string DescribeSelector(const sandboxd::api::Selector& selector);

}  // namespace sandboxctl
