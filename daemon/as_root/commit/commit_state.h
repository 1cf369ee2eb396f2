#pragma once
/// Where a journaled commit is (commit_journal.h), as the journal keeps it: recovery at start-up
/// decides from this alone what a commit cut off at any instant needs (CommitRunner::Recover,
/// a switch the compiler checks for every state).

#include <optional>
#include <string_view>

namespace sandboxd {

enum class CommitState {
  kPlanning,    ///< a whole-upper commit's steps being journaled a page at a time; nothing moved
  kStaging,     ///< a partial commit moving what it takes into its stage
  kApplying,    ///< steps being carried out live
  kApplied,     ///< every step live; its backups being kept
  kDone,        ///< finished: the live tree agrees with the sandbox
  kRolledBack,  ///< taken back whole (a failed step); nothing of it is live
  kImporting,   ///< an undo bringing the backups into landing areas; nothing moved live yet
  kUndoing,     ///< an undo's steps being taken back live
  kReturning,   ///< an undo's entries going back into the sandbox
  kUndone,      ///< undone: the live tree is as before it
};

/// The name the journal stores ("planning", "rolled-back", ...).
std::string_view ToString(CommitState state);
std::optional<CommitState> CommitStateFromString(std::string_view name);

}  // namespace sandboxd
