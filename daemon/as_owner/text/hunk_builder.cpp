#include "text/hunk_builder.h"

#include <algorithm>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// Body text is handed on in pieces of about this size.
constexpr size_t kBodyPiece = 64 * 1024;

}  // namespace

HunkBuilder::HunkBuilder(const TextSource& old_text, const TextSource& new_text, int context_lines, size_t max_runs,
                         HunkSink& sink)
    : old_(old_text), new_(new_text), functions_(old_text), context_(static_cast<uint64_t>(std::max(context_lines, 0))),
      max_runs_(std::max<size_t>(max_runs, 1)), sink_(sink) {}

void HunkBuilder::Add(const LineChange& run) {
  if (!runs_.empty()) {
    LineChange& last = runs_.back();
    // Between two runs both texts hold the same lines: a run that breaks this would make a
    // partial commit write the wrong lines, so it is refused rather than reported.
    if (run.old_line < last.old_line + last.old_count || run.new_line < last.new_line + last.new_count ||
        run.old_line - (last.old_line + last.old_count) != run.new_line - (last.new_line + last.new_count) ||
        run.old_begin < last.old_end || run.new_begin < last.new_end ||
        run.old_begin - last.old_end != run.new_begin - last.new_end)
      throw Error(Code::kFailed, "cannot compute a diff: runs of changed lines out of step");
    uint64_t gap = run.old_line - (last.old_line + last.old_count);
    if (gap == 0) {
      // Runs that touch (found in two windows) are one run, as libgit2 would report them.
      last.old_count += run.old_count;
      last.new_count += run.new_count;
      last.old_end = run.old_end;
      last.new_end = run.new_end;
      return;
    }
    if (gap > 2 * context_) Finish();  // xdl_get_hunk: more than 2 x context lines apart
  }
  runs_.push_back(run);
  if (runs_.size() > max_runs_) {
    // A hunk of more runs than can be held: they become one run, the lines between them shown
    // deleted and added again. Still a correct diff of the same hunk, only less precise.
    LineChange merged = runs_.front();
    const LineChange& last = runs_.back();
    merged.old_count = last.old_line + last.old_count - merged.old_line;
    merged.new_count = last.new_line + last.new_count - merged.new_line;
    merged.old_end = last.old_end;
    merged.new_end = last.new_end;
    runs_.assign(1, merged);
  }
}

void HunkBuilder::Finish() {
  if (runs_.empty()) return;
  Flush();
  runs_.clear();
}

void HunkBuilder::Flush() {
  const LineChange& first = runs_.front();
  const LineChange& last = runs_.back();
  // The context lines lie outside every run, so they are the same bytes in both texts.
  TextReader::Lines lead = old_.BackOver(first.old_begin, context_);
  TextReader::Lines trail = old_.ForwardOver(last.old_end, context_);
  const uint64_t lead_bytes = first.old_begin - lead.offset, trail_bytes = trail.offset - last.old_end;
  HunkPlace place{lead.offset, trail.offset, first.new_begin - lead_bytes, last.new_end + trail_bytes};
  const uint64_t old_first = first.old_line - lead.count, new_first = first.new_line - lead.count;
  std::string header = FormatHunkHeader(old_first, last.old_line + last.old_count + trail.count - old_first, new_first,
                                        last.new_line + last.new_count + trail.count - new_first,
                                        functions_.Before(lead.offset));
  ++number_;
  sink_.Hunk(number_, header, place);
  if (sink_.WantsBody(number_)) WriteBody(lead, place.new_end);
}

void HunkBuilder::WriteBody(const TextReader::Lines& lead, uint64_t trail_end) {
  body_.clear();
  WriteLines(old_, lead.offset, runs_.front().old_begin, ' ');
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (i > 0) WriteLines(old_, runs_[i - 1].old_end, runs_[i].old_begin, ' ');
    WriteLines(old_, runs_[i].old_begin, runs_[i].old_end, '-');
    WriteLines(new_, runs_[i].new_begin, runs_[i].new_end, '+');
  }
  WriteLines(new_, runs_.back().new_end, trail_end, ' ');
  if (!body_.empty()) sink_.Body(body_);
  body_.clear();
}

void HunkBuilder::WriteLines(TextReader& text, uint64_t begin, uint64_t end, char origin) {
  bool line_start = true;
  while (begin < end) {
    std::string_view piece = text.From(begin);
    piece = piece.substr(0, static_cast<size_t>(std::min<uint64_t>({piece.size(), end - begin, kBodyPiece})));
    for (size_t at = 0; at < piece.size();) {
      if (line_start) body_ += origin;
      size_t newline = piece.find('\n', at);
      size_t stop = newline == std::string_view::npos ? piece.size() : newline + 1;
      body_.append(piece.substr(at, stop - at));
      line_start = newline != std::string_view::npos;
      at = stop;
    }
    begin += piece.size();
    if (body_.size() >= kBodyPiece) {
      sink_.Body(body_);
      body_.clear();
    }
  }
  // Only a text's last line ends without '\n' (xdl_emit_diffrec).
  if (!line_start) body_ += "\n\\ No newline at end of file\n";
}

}  // namespace sandboxd
