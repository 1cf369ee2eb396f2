#pragma once
/// The hunk sequence of a text change: the one function behind `diff` (diff_writer), `hunks`
/// and `merge` (hunk_merge), so that hunk N a user reads in the diff is hunk N they approve and
/// hunk N a partial commit applies, for texts of every size. Pure: reads two TextSources, writes
/// nothing.
///
/// Two ways, chosen from the texts alone (so all three callers choose alike):
/// - texts up to TextDiffLimits::whole_bytes each (16 MiB) and whole_lines together go to
///   libgit2 whole, in one call, exactly as every diff was made before big texts were text;
/// - bigger ones never are in memory whole: what both texts share at the start and the end is
///   skipped, and the rest is diffed in windows of at most window_bytes / window_lines a side
///   (change_finder.h), whose runs of changed lines are grouped into hunks with their context
///   as libgit2 groups them (hunk_builder.h). Memory stays bounded by the limits, whatever the
///   size of the texts.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/text_source.h"

namespace sandboxd {

struct TextDiffLimits {
  /// Texts up to this size each, and up to whole_lines lines together, are diffed whole by
  /// libgit2. libgit2 takes about 90 bytes a line of each text beside the texts, so this caps
  /// that way at about 2 x 16 MiB + 90 MiB.
  uint64_t whole_bytes = uint64_t{16} << 20;
  uint64_t whole_lines = uint64_t{1} << 20;
  /// Most bytes and lines of each side one libgit2 call sees in a bigger diff.
  size_t window_bytes = size_t{4} << 20;
  size_t window_lines = size_t{1} << 16;
  /// How far ahead a window that found nothing in common looks for where its first lines come
  /// back (a big insertion or deletion) before it shows the window as replaced.
  uint64_t anchor_search_bytes = uint64_t{64} << 20;
  /// A hunk of more runs of changed lines than this shows them as one run (the lines between
  /// them deleted and added again), so that no hunk needs more than this many runs in memory.
  size_t hunk_runs = size_t{1} << 16;
};

/// Where a hunk lies in both texts: bytes [begin, end) of its lines, context included. The
/// context lines are the same in both texts; a partial commit takes [new_begin, new_end) of an
/// approved hunk in place of [old_begin, old_end).
struct HunkPlace {
  uint64_t old_begin = 0, old_end = 0, new_begin = 0, new_end = 0;
};

/// Receives the hunks of a text change in order.
class HunkSink {
 public:
  virtual ~HunkSink() = default;
  /// Hunk `number` (from 1); `header` is its "@@ -1,3 +1,4 @@ ..." line without the newline.
  virtual void Hunk(int number, std::string_view header, const HunkPlace& place) = 0;
  /// Whether to make the body of hunk `number` (right after its Hunk call).
  virtual bool WantsBody(int /*number*/) { return false; }
  /// A piece of the body of the last hunk: whole lines with their ' ', '-', '+' prefixes and
  /// "\ No newline at end of file" lines, in pieces as large as the producer likes.
  virtual void Body(std::string_view /*piece*/) {}
};

/// Reports every hunk of old → new with `context_lines` lines of context to `sink`. Throws
/// Error(kFailed) when a text cannot be read (a file that shrank meanwhile) or libgit2 fails.
void ForEachHunk(const TextSource& old_text, const TextSource& new_text, int context_lines, HunkSink& sink,
                 const TextDiffLimits& limits = {});

}  // namespace sandboxd
