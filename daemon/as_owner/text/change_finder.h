#pragma once
/// The runs of changed lines between two texts too big to hand libgit2 whole, found with memory
/// bounded by TextDiffLimits whatever their size: the lines both texts share at the start and at
/// the end are skipped by comparing bytes, and the rest goes to libgit2 (ChangedLineRuns) in
/// windows, each starting where the texts are known to be in step.
///
/// How windows are cut (why the result is a valid diff, and when it is not git's):
/// - A window holds the next lines of each side, whole, from a pair of line starts where the
///   texts are in step (everything before is accounted for): 64 KiB / 1024 lines a side at
///   first, doubled while it cannot vouch for any run, up to window_bytes / window_lines.
/// - libgit2's runs inside it are kept up to the first run that reaches the last quarter of a
///   side that does not end there: near the end of a window the two sides may be cut at lines
///   that do not correspond (after an insertion, one side's window reaches further into the
///   file), and runs there may be artefacts of the cut. The next window starts at the kept
///   runs' end, which is a line of both texts libgit2 matched, so windows fit together.
/// - Only when the first run itself reaches that last quarter of the largest window (nothing in
///   common near its start): a run that ends inside the window is kept anyway; a run that fills
///   the window is a big insertion or deletion when the window's first lines come back further
///   on in the other text (looked for up to anchor_search_bytes ahead), and otherwise the window
///   is shown as replaced whole, and the next one starts after it on both sides.
/// - A first line longer than the largest window is shown as replaced by the other side's first
///   line.
/// Every run that is kept is a correct piece of an edit script, so applying all of them always
/// gives the new text. Where libgit2 would have placed a run differently seeing the whole files
/// (repeated lines around a cut, a region rewritten over more than a window), the diff is
/// valid but may differ from git's; hunk grouping is not affected by cuts (hunk_builder.h).

#include <cstdint>
#include <functional>

#include "text/text_hunks.h"
#include "text/text_source.h"

namespace sandboxd {

/// One run of changed lines: old lines [old_line, old_line + old_count) give way to new lines
/// [new_line, new_line + new_count) (counted from 0), at bytes [old_begin, old_end) and
/// [new_begin, new_end). What lies between two runs is the same in both texts.
struct LineChange {
  uint64_t old_line = 0, old_count = 0, new_line = 0, new_count = 0;
  uint64_t old_begin = 0, old_end = 0, new_begin = 0, new_end = 0;
};

/// Calls `emit` with every run of changed lines of old → new, in order.
void FindChanges(const TextSource& old_text, const TextSource& new_text, const TextDiffLimits& limits,
                 const std::function<void(const LineChange&)>& emit);

}  // namespace sandboxd
