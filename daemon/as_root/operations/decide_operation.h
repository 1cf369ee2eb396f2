#pragma once
/// The owner's verdict on changes or hunks (Sandbox.Approve and Reject): Review::Decide, with
/// the hunks of the files it names counted by the helper, as the owner (it reads both sides);
/// and what keeps a verdict made while a job ran to the bytes it was made on (Approval::content).

#include <cstddef>
#include <string>
#include <vector>

#include "selector.h"
#include "changes/approval.h"
#include "operations/operation_parts.h"
#include "review/review_log.h"

namespace sandboxd {

class SandboxReader;

/// Returns how many changes or hunks were decided; refuses (Error naming it) a selector that
/// names nothing, and a sandbox that is not active. While a job of the sandbox runs, each
/// decision is bound to the digest of its content as it is now. The decision goes into the
/// review log with `note` (checked by the caller: ReviewLog::kMaxNoteBytes).
size_t DecideChanges(const OperationParts& parts, const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool all, Verdict verdict,
                     const std::string& note = "");

/// Adds `entry` (its time: now) to the sandbox's review log. Never throws: the act it records
/// has taken effect, and a log that cannot be written must not make it look failed (logged).
void RecordReviewAct(const OperationParts& parts, const SandboxReader& sandbox, ReviewEntry entry) noexcept;

/// Review::CheckBound with the owner's helper digesting: after a job's end (unbinding once no
/// job runs), and before anything takes decisions over (commit, undo, suspend), where no job
/// runs. Logs what lapsed.
void CheckBoundDecisions(const OperationParts& parts, const SandboxReader& sandbox);

}  // namespace sandboxd
