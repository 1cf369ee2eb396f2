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

#include "unique_fd.h"

namespace sandboxd {

class OverlayMarksTaken {
 public:
  /// How an entry's marks are read and taken off: by its name beneath its directory (the
  /// *xattrat calls of Linux 6.13), or through an fd of the entry opened for it (older kernels,
  /// where those calls fail with ENOSYS). kByName is used where the kernel has it.
  enum class Calls { kByName, kThroughOpen };
  static Calls CallsOfThisKernel();

  /// Creates (or empties) the note at `path`. Throws Error.
  explicit OverlayMarksTaken(const std::string& path, Calls calls = CallsOfThisKernel());
  /// Notes the marks of the entries at `paths` beneath `upper` (root `root`'s, never through a
  /// symlink), then takes them off. Entries come a batch of one directory at a time: their
  /// notes in one write, then their marks off, so a daemon killed anywhere loses no mark (a
  /// note of a mark still on gives back what is there). Missing entries, symlinks and sockets
  /// are passed over (overlayfs reads a symlink's marks only inside an upper layer). Throws
  /// Error naming the path.
  void TakeFromEach(int upper, size_t root, const std::vector<std::string>& paths);
  /// Syncs the note: done before anything goes live. Throws Error.
  void Close();

 private:
  struct Marked;
  void TakeOff(std::vector<Marked>& batch);

  std::string path_;
  Calls calls_;
  std::vector<std::string> names_;  // the marks' attribute names
  UniqueFd file_;
};

/// Gives the marks noted at `path` back to the entries of `upper_fds` (root i's upper at i)
/// that are still at their paths with the inodes they had. No note there: nothing was taken.
/// Returns how many entries got theirs back. Throws Error naming what failed.
size_t GiveBackOverlayMarks(const std::string& path, const std::vector<int>& upper_fds);

}  // namespace sandboxd
