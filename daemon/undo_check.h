#pragma once
/// Whether a commit can still be undone: every entry it put live must be as the commit left it.
/// A file the commit placed must still be that inode and unchanged since (its ctime not after
/// the commit finished: a write in place keeps the inode but moves the ctime); a path it removed
/// must still be free; a directory it made must hold only entries the commit made; a mode it
/// set must still be that mode. Otherwise undoing would throw away what the owner did since.
/// Metadata only, read as root beneath each root without following symlinks.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "commit_step.h"

namespace sandboxd {

/// {root, path} → when (nanoseconds since the epoch) the undo of a later commit put back the
/// entry that commit had set aside at that path (and everything beneath it). That undo moved
/// those entries, and so their ctimes, itself: the live tree agreed with the commit being
/// checked again from then on. Only later commits that were not forced count (a forced one may
/// have set aside an entry someone had changed, whose ctime its undo then hid).
using PutBackTimes = std::map<std::pair<size_t, std::string>, int64_t>;

/// `live_fds[i]` is root i; `prefixes[i]` its display prefix. Returns "PATH (why)" per entry
/// that changed since the commit finished at `finished_ns` (nanoseconds since the epoch), or,
/// for a path in `put_back`, since it was put back.
std::vector<std::string> FindUndoConflicts(const std::vector<CommitStep>& steps, const std::vector<int>& live_fds,
                                           const std::vector<std::string>& prefixes, int64_t finished_ns,
                                           const PutBackTimes& put_back = {});

}  // namespace sandboxd
