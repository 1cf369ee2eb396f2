#include "lifecycle/roots_progress.h"

#include <algorithm>

namespace sandboxd {
namespace {

/// A total: the one known ahead (never below what is done: a count taken ahead is a walk of
/// metadata, and an entry can be passed over), else what is known so far, else unknown (0).
uint64_t Total(uint64_t ahead, uint64_t before, uint64_t root_total, uint64_t done) {
  if (ahead != 0) return std::max(ahead, done);
  return root_total != 0 ? std::max(before + root_total, done) : 0;
}

}  // namespace

ProgressFigures RootsProgress::Of(const ArchiveProgress& root) {
  current_ = root;
  ProgressFigures figures;
  figures.phase = phase_;
  figures.entries_done = before_.entries_done + root.entries_done;
  figures.bytes_done = before_.bytes_done + root.bytes_done;
  figures.entries_total = Total(totals_.entries_total, before_.entries_done, root.entries_total, figures.entries_done);
  figures.bytes_total = Total(totals_.bytes_total, before_.bytes_done, root.bytes_total, figures.bytes_done);
  return figures;
}

void RootsProgress::NextRoot(const ArchiveStats& finished) {
  // A root done did all its entries, and all its bytes where their total was known.
  before_.entries_done += std::max(current_.entries_done, finished.entries);
  before_.bytes_done += std::max(current_.bytes_done, current_.bytes_total);
  current_ = {};
}

}  // namespace sandboxd
