#pragma once
/// Commit, undo and discard of a sandbox's changes, whole: the sandbox held exclusively and
/// unmounted, the owner's decisions read once of exactly what is there, the commit runner's
/// transaction (commit_runner.h), the decisions pinned across its moves and settled after, and
/// the sandbox mounted again, whichever way it ended. The caller has authorized the verb.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "selector.h"
#include "operations/operation_parts.h"

namespace sandboxd {

class Sandbox;

struct CommitAsked {
  std::vector<api::Selector> selectors;  ///< as Review::Outlook; none: every approved change
  bool all = false;                    ///< every change not rejected counts as approved
  bool force = false;                  ///< past conflicts with the live tree
};

struct Committed {
  size_t committed = 0;
  /// One line per entry that could not be committed (a socket...), and one if the sandbox could
  /// not be mounted again after the commit went live (MountAgainAfter).
  std::vector<std::string> skipped;
};

/// Asked once the commit knows how many changes it takes, before anything moves (polkit's
/// question names them); throws to refuse. Not asked when nothing is to be committed.
using CommitConsent = std::function<void(size_t changes)>;

/// Commits what `asked` names, all or nothing (commit_runner.h); nothing to commit touches
/// nothing live. Throws Error naming the sandbox, path or conflict that refuses it.
Committed CommitChanges(const OperationParts& parts, Sandbox& sandbox, const CommitAsked& asked, const CommitConsent& consent);

/// Takes the sandbox's last commit back (CommitRunner::Undo); returns its id.
int64_t UndoLastCommit(const OperationParts& parts, Sandbox& sandbox);

/// Throws away every change of the sandbox, and what was decided and seen of them. The layers
/// go to the trash, which the caller empties later (SandboxRegistry::EmptyTrash).
void DiscardChanges(const OperationParts& parts, Sandbox& sandbox);

}  // namespace sandboxd
