#pragma once
/// What a commit or an undo leaves to do once its moves are over, whichever way they ended.

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

}  // namespace sandboxd
