#pragma once
/// Two names of one live inode stay one inode through a sandbox (DESIGN, "Fidelity").
///
/// overlayfs with index=on keeps them one on copy-up: a job writing through `sub/h2` copies the
/// inode up once, into the overlay's index, and the merged view shows the copy under every name
/// of it (`h1` too). But only the name written through gets an entry in the upper layer; the
/// others get theirs ("link-up") only when something is done through them. The change set,
/// decisions, suspend's archives and commits read the upper layer alone, so they would miss
/// `h1`, and a commit would put the new inode live as `sub/h2` and leave `h1` the old one (and a
/// resume, whose overlay starts with an empty index, would show `h1` old again).
///
/// The same happens when a job removes one name of such an inode: overlayfs copies the inode
/// up before it whites the name out, and the other names show the copy from then on (a live
/// edit of them no longer shows in the sandbox: it is a change of theirs, and a conflict).
///
/// LinkUpHardLinks gives every such name its upper entry, the way overlayfs does it itself: the
/// name is opened for writing through the merged view (nothing is written; the merged view does
/// not change). From then on the upper holds the names as one inode, `changes` lists each, a
/// commit takes all of them or none (commit_runner.cpp) and puts them live as one inode.

#include <set>
#include <string>
#include <vector>

#include "model/change.h"

namespace sandboxd {

/// For one root: `live_fd` its live directory, `upper_fd` its upper layer, `merged_fd` the root
/// of its mounted overlay (all as root), `changes` its change set as read from the upper
/// (changeset_scanner.h). Only files that changed are looked at: one that was only copied up
/// (touched) shows the same under every name. The live tree is searched only when a changed
/// file has names in the merged view that the upper lacks (names outside the root are never
/// found: while one is missing, each call searches the whole root again). A name that cannot be
/// opened because a job is running it (ETXTBSY) is left for the next call; other failures throw
/// Error naming the path. Returns the names linked up (relative to the root): when any, the
/// change set is to be read again, and the sandbox froze them (their sights, live_sight.h).
/// `multi_linked`, when given, names every file of the upper with more than one link (the scan
/// saw them): the others are not stat'ed again (a third of a scan's cost at 10,000 changes).
std::vector<std::string> LinkUpHardLinks(int live_fd, int upper_fd, int merged_fd, const std::vector<Change>& changes,
                                         const std::set<std::string>* multi_linked = nullptr);

}  // namespace sandboxd
