#include "operations/commit_operation.h"

#include <future>

#include "base/errors.h"
#include "commit/commit_runner.h"
#include "logging/log.h"
#include "operations/after_moves.h"
#include "operations/decide_operation.h"
#include "helper_clients/helper_client.h"
#include "review/review.h"
#include "sandbox/sandbox.h"
#include "utf8.h"

namespace sandboxd {
namespace {

/// The exception being handled as "error name: message", as the caller will hear it, cut as
/// the bus cuts it (a conflict may name a million paths a job chose).
std::string CurrentFailure() {
  std::string text;
  try {
    throw;
  } catch (const Error& e) {
    text = std::string(DBusErrorName(e.code())) + ": " + e.what();
  } catch (const std::exception& e) {
    text = e.what();
  } catch (...) {
    text = "an unknown failure";
  }
  return api::CutToBytes(api::EscapeInvalidUtf8(text), 1u << 20);
}

}  // namespace

Committed CommitChanges(const OperationParts& parts, Sandbox& sandbox, const CommitAsked& asked, const CommitConsent& consent) {
  const LogSubject subject{sandbox.id(), sandbox.owner()};
  // Held from before the question to polkit (or a person) until the end, and unmounted before
  // anything moves: the merged view and jobs are the only ways into the upper, so from here on
  // nothing but this commit changes it. The decisions are read once, of exactly what is there,
  // and the question names what the commit will take.
  ExclusiveOperation exclusive(sandbox.gate(), "commit");
  // No job runs from here on: a decision bound to bytes (made while one ran) holds only if
  // they are still the bytes it was made on, whatever the time stamps say (approval.h).
  CheckBoundDecisions(parts, sandbox);
  std::future<void> unmounted = sandbox.UnmountBeside();
  CommitRequest request;
  int64_t commit = 0;
  try {
    // One pass learns what the question names and whether the commit takes the whole change
    // set, which then streams from the upper; a part streams from the review as the commit
    // stages it. Neither is ever held whole: a change set may be a million. It reads the layers
    // while the overlays are torn down beside it.
    CommitOutlook outlook = parts.review.Outlook(sandbox, asked.selectors, asked.all);
    unmounted.get();
    if (outlook.changes > 0 && outlook.everything && !outlook.uncommittable && CommitRunner::TakesWholeUpper(sandbox)) {
      request.whole_upper = true;
      request.renames = std::move(outlook.renames);
    } else if (outlook.taken > 0) {
      request.taken = [&parts, &sandbox, &asked, &commit](const auto& take) {
        // What is left of a hunk taken in part keeps its decisions by how the diff left cuts
        // it, which only the owner's helper can read.
        auto shape_left = [&parts, &sandbox](size_t root, const Change& change, const HunkPick& pick) {
          UniqueFd live = sandbox.OpenLiveRoot(root), upper = sandbox.OpenUpper(root);
          return ShapeLeftAsOwner(parts.helpers, LookupUser(sandbox.owner()), live.get(), upper.get(), change.path, pick);
        };
        return parts.review.StreamTaken(sandbox, asked.selectors, asked.all, commit, take, shape_left);
      };
    }
    request.force = asked.force;
    // Asked only of a commit that takes something: no one is asked for a password to commit
    // nothing.
    if (request.whole_upper || request.taken) consent(outlook.changes);
  } catch (...) {
    if (unmounted.valid()) unmounted.wait();
    RemountUnlessBroken(sandbox, "commit");
    throw;
  }
  // Nothing to commit touches nothing live (and asks no one about it).
  if (!request.taken && !request.whole_upper) {
    sandbox.SetUp();
    return {};
  }
  CommitRunner::Outcome outcome;
  // What the owner decided outlives the entries' moves to the stage and, if the commit is
  // refused, fails or is cut off, back (recovery pins them again after a kill). The hunks a
  // partly committed file keeps wait in the store for the commit's outcome.
  parts.review.PinBeforeMoves(sandbox);
  InodesByRoot taken_back;  // a commit that fails after its steps ran gave these their names back
  try {
    // The files move in the helper with the owner's credentials: a commit can never write where
    // its owner could not.
    outcome = parts.commits.Commit(
        sandbox, request,
        [&](int64_t journaled) {
          commit = journaled;
          // Undo brings back every decision that held before (DESIGN, "Data safety").
          parts.review.store().KeepBeforeCommit(sandbox.id(), journaled);
        },
        &taken_back);
    for (const auto& skipped : outcome.skipped) LogAbout(subject, spdlog::level::warn, "sandbox {}: {}", sandbox.id(), skipped);
  } catch (...) {
    // The caller hears why; the log keeps it beside the journal's commit id, for an admin (and
    // a test that saw only an exit status).
    LogAbout(subject, spdlog::level::info, "sandbox {}: commit {} did not go live: {}", sandbox.id(), commit, CurrentFailure());
    SettleDecisionsQuietly(parts, sandbox, taken_back);
    if (commit != 0) {
      try {
        parts.review.store().DropKept(sandbox.id(), commit);
      } catch (const std::exception&) {
        // Left behind, it is forgotten with the sandbox; nothing reads it.
      }
    }
    RemountUnlessBroken(sandbox, "commit");
    throw;
  }
  // The commit is live: from here on nothing makes it a failure.
  std::string not_mounted = MountAgainAfter(sandbox, "commit");
  if (!not_mounted.empty()) outcome.skipped.push_back(std::move(not_mounted));
  try {
    parts.review.AfterCommit(sandbox, commit, request.whole_upper, parts.journal);
  } catch (const std::exception& e) {
    LogAbout(subject, spdlog::level::warn, "sandbox {}: cannot update its approvals after the commit: {}", sandbox.id(), e.what());
  }
  SettleDecisionsQuietly(parts, sandbox, outcome.worked);
  if (outcome.committed > 0) RecordReviewAct(parts, sandbox, {.time_usec = 0, .act = ReviewAct::kCommitted, .what = {std::to_string(outcome.committed)}, .note = ""});
  return {outcome.committed, std::move(outcome.skipped)};
}

int64_t UndoLastCommit(const OperationParts& parts, Sandbox& sandbox) {
  ExclusiveOperation exclusive(sandbox.gate(), "undo");
  CheckBoundDecisions(parts, sandbox);  // as a commit does
  sandbox.Unmount();
  CommitRunner::UndoOutcome outcome;
  // Like a commit's, an undo's work moves the ctime of other names of the files it puts back:
  // the decisions about those names hold across it.
  parts.review.PinBeforeMoves(sandbox);
  try {
    outcome = parts.commits.Undo(sandbox);
  } catch (...) {
    SettleDecisionsQuietly(parts, sandbox);
    RemountUnlessBroken(sandbox, "undo");
    throw;
  }
  MountAgainAfter(sandbox, "undo");  // the undo is done: from here on nothing makes it a failure
  try {
    parts.journal.ForEachStepPage(outcome.commit, false, 4096, [&](const std::vector<CommitStep>& steps) {
      std::vector<RecordKey> taken;
      for (const auto& step : steps) {
        taken.emplace_back(step.root, step.path);
        if (!step.from.empty()) taken.emplace_back(step.root, step.from);
      }
      parts.review.store().TakeBackKept(sandbox.id(), outcome.commit, taken);
    });
    parts.review.store().RestoreKept(sandbox.id(), outcome.commit);
  } catch (const std::exception& e) {
    LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "sandbox {}: cannot bring back the decisions of commit {}: {}",
             sandbox.id(), outcome.commit, e.what());
  }
  SettleDecisionsQuietly(parts, sandbox, outcome.worked);
  for (const auto& note : outcome.notes) LogAbout({sandbox.id(), sandbox.owner()}, spdlog::level::warn, "{}", note);
  return outcome.commit;
}

void DiscardChanges(const OperationParts& parts, Sandbox& sandbox) {
  ExclusiveOperation exclusive(sandbox.gate(), "discard");
  sandbox.Unmount(Sandbox::Layers::kDiscarded);
  try {
    sandbox.TrashLayers();
    parts.review.store().Clear(sandbox.id());
    parts.sights.Clear(sandbox.id());  // nothing changed, nothing seen
  } catch (...) {
    sandbox.SetUp();
    throw;
  }
  MountAgainAfter(sandbox, "discard");
  RecordReviewAct(parts, sandbox, {.time_usec = 0, .act = ReviewAct::kDiscarded, .what = {}, .note = ""});
}

}  // namespace sandboxd
