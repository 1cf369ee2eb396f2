#pragma once
/// Suspend and resume archive one root at a time, and each root's archive helper reports its
/// own figures (upper_archive.h). RootsProgress makes them the sandbox's: what the roots before
/// did is added on, and the totals are the whole sandbox's where they are known ahead, so that
/// a bar over several roots only moves on (it would start again at each root otherwise).

#include <string>

#include "model/archive_progress.h"
#include "sandbox/operation_progress.h"

namespace sandboxd {

class RootsProgress {
 public:
  /// `totals`: of every root together, each 0 where not known ahead (the root under way's own
  /// total is then added to what the roots before did).
  RootsProgress(ProgressPhase phase, ArchiveProgress totals) : phase_(phase), totals_(totals) {}

  /// The sandbox's figures, given the root under way's.
  ProgressFigures Of(const ArchiveProgress& root);
  /// The root under way is done (`finished`: what its helper said at the end: the last figures
  /// reported may fall short of it); the next one's figures start from nothing.
  void NextRoot(const ArchiveStats& finished);

 private:
  ProgressPhase phase_;
  ArchiveProgress totals_;
  ArchiveProgress before_;   ///< done by the roots before (done figures only)
  ArchiveProgress current_;  ///< the root under way's last figures
};

}  // namespace sandboxd
