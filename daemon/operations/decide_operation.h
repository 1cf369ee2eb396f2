#pragma once
/// The owner's verdict on changes or hunks (Sandbox.Approve and Reject): Review::Decide, with
/// the hunks of the files it names counted by the helper, as the owner (it reads both sides).

#include <cstddef>
#include <string>
#include <vector>

#include "changes/approval.h"
#include "operations/operation_parts.h"

namespace sandboxd {

class Sandbox;

/// Returns how many changes or hunks were decided; refuses (Error naming it) a selector that
/// names nothing, and a sandbox that is not active.
size_t DecideChanges(const OperationParts& parts, Sandbox& sandbox, const std::vector<std::string>& selectors, bool all, Verdict verdict);

}  // namespace sandboxd
