#pragma once
/// The overlay marks (origin, nlink: overlay.h OverlayXattrPrefix) a commit takes off the
/// entries it is about to put live, noted in a file of the commit's own area (root's only)
/// before each comes off, so that a commit that is taken back, planned but abandoned, or cut
/// off and taken back by recovery gives every entry still in the upper its marks back. Left
/// without its origin, an entry the overlay's index links is one overlayfs refuses to mount
/// over (ENODATA): the sandbox could not be used again; and conflicts would miss that its live
/// original went (conflict_check.cpp).

#include <cstddef>
#include <string>
#include <vector>

#include "base/fd.h"

namespace sandboxd {

class OverlayMarksTaken {
 public:
  /// Creates (or empties) the note at `path`. Throws Error.
  explicit OverlayMarksTaken(const std::string& path);
  /// Notes the marks of `entry` (open for reading), the entry at `path` of root `root`, then
  /// takes them off. Each note is written before its marks go (one write: a daemon killed
  /// after it loses no mark). Throws Error naming `path`.
  void TakeFrom(int entry, size_t root, const std::string& path);
  /// Syncs the note: done before anything goes live. Throws Error.
  void Close();

 private:
  std::string path_;
  UniqueFd file_;
};

/// Gives the marks noted at `path` back to the entries of `upper_fds` (root i's upper at i)
/// that are still at their paths with the inodes they had. No note there: nothing was taken.
/// Returns how many entries got theirs back. Throws Error naming what failed.
size_t GiveBackOverlayMarks(const std::string& path, const std::vector<int>& upper_fds);

}  // namespace sandboxd
