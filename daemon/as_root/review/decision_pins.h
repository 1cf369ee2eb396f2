#pragma once
/// The owner's decisions across everything that moves the upper's entries (DESIGN: decisions
/// survive every way the daemon keeps state): suspend and resume (an archive round trip), and a
/// commit, which moves the entries it takes into its stage and, when it is taken back or cut off
/// before it went live, back again. A decision holds for the change it was made on, known by a
/// fingerprint that names the upper entry's inode and ctime (fingerprint.h); a move changes the
/// ctime, an archive both. So before the move each decision that holds is re-pinned to what a
/// move keeps (mode, size, mtime), and after it pinned again to the entry as it then is: a
/// decision that did not hold before never comes back, and the live side is compared as ever
/// (a live edit while suspended makes the change pending).

#include "model/commit_step.h"
#include "review/approval_store.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"

namespace sandboxd {

/// Before archiving or a commit (layers intact, unmounted): each decision that holds now gets an archive
/// fingerprint; one that no longer holds is forgotten (it showed as pending already).
void PinDecisionsForMove(ApprovalStore& approvals, const SandboxReader& sandbox);

/// After restoring (resume, a suspend taken back, a commit's end, recovery): each move fingerprint is pinned to its
/// restored entry when that entry is what was archived, and the decision forgotten otherwise.
/// Its live side is taken as it is now where it moved only by the work itself: a live entry
/// that differs in nothing but its ctime, on one of the inodes (per root) `worked` took a name
/// from or gave one back to (another name of a hard link: InodesNamedBy). An owner's own edit
/// of that file during the work that keeps its mode, size and mtime (a `touch -r`) is taken for
/// the work's: a window of the commit's length, over the owner's own decision. Decisions with
/// ordinary fingerprints are left as they are. Idempotent.
void PinDecisionsToLayers(ApprovalStore& approvals, const SandboxReader& sandbox, const InodesByRoot& worked = {});

}  // namespace sandboxd
