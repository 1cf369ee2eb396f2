#pragma once
/// Whether a commit can still be undone: every entry it put live must be as the commit left it.
/// A file the commit placed must still be that inode and unchanged since (its ctime not after
/// the commit finished: a write in place keeps the inode but moves the ctime); a path it removed
/// must still be free; a directory it made must hold only entries the commit made; a mode it
/// set must still be that mode. Otherwise undoing would throw away what the owner did since.
/// Metadata only, read as root beneath each root without following symlinks.

#include <cstdint>
#include <set>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/commit_step.h"

namespace sandboxd {

/// {root, path} → when (nanoseconds since the epoch) the undo of a later commit put back the
/// entry that commit had set aside at that path (and everything beneath it). That undo moved
/// those entries, and so their ctimes, itself: the live tree agreed with the commit being
/// checked again from then on. Only later commits that were not forced count (a forced one may
/// have set aside an entry someone had changed, whose ctime its undo then hid).
using PutBackTimes = std::map<std::pair<size_t, std::string>, int64_t>;

/// FindUndoConflicts for a commit's steps read a page at a time, in order: what it holds grows
/// with the entries of the directories the commit made whose steps are still to come (parents
/// come before their children), never with the commit. Keeps the first `named` conflicts and
/// counts the rest.
class UndoConflictFinder {
 public:
  UndoConflictFinder(std::vector<int> live_fds, std::vector<std::string> prefixes, int64_t finished_ns,
                     PutBackTimes put_back, size_t named = SIZE_MAX);
  void Check(const std::vector<CommitStep>& steps);
  /// "PATH (why)" of the first conflicts, in the order found (entries added to a directory the
  /// commit made last).
  std::vector<std::string> Finish();
  /// All conflicts found, named or not (after Finish).
  size_t count() const { return count_; }

 private:
  void Found(std::string conflict);

  std::vector<int> live_fds_;
  std::vector<std::string> prefixes_;
  int64_t finished_ns_;
  PutBackTimes put_back_;
  size_t named_;
  size_t count_ = 0;
  std::vector<std::string> conflicts_;
  /// Entries of the live directories the commit made that no step seen so far put there.
  std::set<std::pair<size_t, std::string>> unexplained_;
};

/// `live_fds[i]` is root i; `prefixes[i]` its display prefix. Returns "PATH (why)" per entry
/// that changed since the commit finished at `finished_ns` (nanoseconds since the epoch), or,
/// for a path in `put_back`, since it was put back.
std::vector<std::string> FindUndoConflicts(const std::vector<CommitStep>& steps, const std::vector<int>& live_fds,
                                           const std::vector<std::string>& prefixes, int64_t finished_ns,
                                           const PutBackTimes& put_back = {});

}  // namespace sandboxd
