#include "commit/commit_state.h"

#include <utility>

#include "base/name_table.h"

namespace sandboxd {
namespace {

// The names stored in the journal's commits.state; the SQL of commit_journal.cpp names some of
// them in its conditions.
constexpr std::pair<CommitState, std::string_view> kStateNames[] = {
    {CommitState::kPlanning, "planning"},   {CommitState::kStaging, "staging"},
    {CommitState::kApplying, "applying"},   {CommitState::kApplied, "applied"},
    {CommitState::kDone, "done"},           {CommitState::kRolledBack, "rolled-back"},
    {CommitState::kImporting, "importing"}, {CommitState::kUndoing, "undoing"},
    {CommitState::kReturning, "returning"}, {CommitState::kUndone, "undone"},
};

}  // namespace

std::string_view ToString(CommitState state) { return NameOf(kStateNames, state, "unknown"); }

std::optional<CommitState> CommitStateFromString(std::string_view name) { return ValueOf<CommitState>(kStateNames, name); }

}  // namespace sandboxd
