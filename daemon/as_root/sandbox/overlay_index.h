#pragma once
/// overlayfs's index (index=on, in the work directory) after it was unmounted. Mounted with
/// nfs_export=on (overlay.h), overlayfs leaves a whiteout in the index, under the lower file's
/// handle, when the sandbox removes its copy of a lower file (and turns an index entry no upper
/// name links to into one at the next mount): for NFS, such a handle must stay dead. But the
/// lower is the live tree, where that file lives on and may come back into the sandbox's view
/// under another name (a commit that moves it there, the owner's rename): overlayfs then finds
/// the whiteout and every lookup of that name is an I/O error. sandboxd exports nothing over
/// NFS, so these entries go: all of them before each mount, the whiteouts also after each job
/// (a job that removed its copy of a file the owner then renames live).

#include <cstddef>

namespace sandboxd {

/// Removes from index directory `index_fd` every whiteout entry and, with `orphans` (only while
/// no overlay over it is mounted: a copy-up in progress has its index entry before its upper
/// name), every non-directory entry no other name links to (a whiteout at the next mount).
/// Only index entries (named by an overlay file handle, "00fb…") are touched, never overlayfs's
/// own work files. What cannot be removed stays. Returns how many went.
size_t ForgetDeadIndexEntries(int index_fd, bool orphans);

}  // namespace sandboxd
