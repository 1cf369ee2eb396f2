#pragma once
/// What a commit or an undo leaves to do once its moves are over, whichever way they ended.

#include <string>

#include "operations/operation_parts.h"
#include "sandbox/live_sight.h"

namespace sandboxd {

class Sandbox;

/// Decisions waiting for the outcome of a commit are settled, and those pinned for its moves
/// pinned again (decision_pins.h); a failure is logged, never thrown: left pinned, they are
/// pinned again at the next start, or lapse, never wrong.
void SettleDecisionsQuietly(const OperationParts& parts, Sandbox& sandbox, const InodesByRoot& worked = {});

/// After a failed commit or undo (the sandbox was unmounted for it): mounted again, unless the
/// failure could not be taken back: then the sandbox stays unmounted and frozen until a restart
/// settles it from the journal, since a job must never run over half a commit.
void RemountUnlessBroken(Sandbox& sandbox, const char* failed);

/// After a commit, undo or discard that took effect (`done` names it): mounted again. A failure
/// is logged and returned as one line for the caller ("" once mounted), never thrown: the verb
/// did what it was asked, and its answer must say so (a caller told it failed would do it
/// again). The sandbox's next job mounts it (JobLauncher); until then nothing runs in it.
std::string MountAgainAfter(Sandbox& sandbox, const char* done);

}  // namespace sandboxd
