#pragma once
/// Hunks from runs of changed lines (change_finder.h), grouped and numbered as libgit2 groups
/// them (xdl_get_hunk, xdl_emit_diff): runs at most 2 x context lines apart share a hunk; a hunk
/// has up to `context` lines before its first run and after its last; the pre-context and the
/// lines between runs are written from the old text, the post-context from the new one (the
/// same bytes). Grouping looks only at the runs, never at where change_finder cut its windows,
/// so two edits 3 lines apart on both sides of a cut are one hunk, as in git. Bodies are read
/// from the texts as they are written, a block at a time: a hunk of any size costs a block.

#include <cstddef>
#include <string>
#include <vector>

#include "text/change_finder.h"
#include "text/hunk_header.h"
#include "text/text_hunks.h"
#include "text/text_reader.h"

namespace sandboxd {

class HunkBuilder {
 public:
  HunkBuilder(const TextSource& old_text, const TextSource& new_text, int context_lines, size_t max_runs, HunkSink& sink);
  /// The next run, after every run added before it.
  void Add(const LineChange& run);
  /// Reports the last hunk.
  void Finish();

 private:
  void Flush();
  void WriteBody(const TextReader::Lines& lead, uint64_t trail_end);
  /// Lines [begin, end) of `text`, each behind `origin`, into body_ (and on to the sink).
  void WriteLines(TextReader& text, uint64_t begin, uint64_t end, char origin);

  TextReader old_, new_;
  FunctionLines functions_;
  const uint64_t context_;
  const size_t max_runs_;
  HunkSink& sink_;
  std::vector<LineChange> runs_;  ///< the runs of the hunk being gathered
  int number_ = 0;
  std::string body_;
};

}  // namespace sandboxd
