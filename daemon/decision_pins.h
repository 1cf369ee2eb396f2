#pragma once
/// The owner's decisions across suspend and resume (DESIGN: decisions survive every way the
/// daemon keeps state). A decision holds for the change it was made on, known by a fingerprint
/// that names the upper entry's inode and ctime (fingerprint.h); an archive round trip changes
/// both. So before the layers are archived each decision that holds is re-pinned to what the
/// archive keeps, and after they are restored pinned again to the restored entry: a decision
/// that did not hold before the suspend never comes back, and the live side is compared as
/// ever (a live edit while suspended makes the change pending).

#include "approval_store.h"
#include "sandbox.h"

namespace sandboxd {

/// Before archiving (layers intact, unmounted): each decision that holds now gets an archive
/// fingerprint; one that no longer holds is forgotten (it showed as pending already).
void PinDecisionsForArchive(ApprovalStore& approvals, const Sandbox& sandbox);

/// After restoring (resume, or a suspend taken back): each archive fingerprint is pinned to its
/// restored entry when that entry is what was archived, and the decision forgotten otherwise.
/// Decisions with ordinary fingerprints are left as they are. Idempotent.
void PinDecisionsToLayers(ApprovalStore& approvals, const Sandbox& sandbox);

}  // namespace sandboxd
