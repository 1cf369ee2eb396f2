#include "text/text_hunks.h"

#include <git2.h>

#include <algorithm>
#include <string>

#include "base/errors.h"
#include "text/change_finder.h"
#include "text/hunk_builder.h"
#include "text/text_patch.h"

namespace sandboxd {
namespace {

/// Where lines of a text in memory start, asked for in increasing order (hunks come in order).
class LineOffsets {
 public:
  explicit LineOffsets(std::string_view text) : text_(text) {}
  /// Where line `line` (from 0) starts; the text's size for the line after its last.
  uint64_t Of(uint64_t line) {
    while (line_ < line && offset_ < text_.size()) {
      size_t newline = text_.find('\n', offset_);
      offset_ = newline == std::string_view::npos ? text_.size() : newline + 1;
      ++line_;
    }
    return offset_;
  }

 private:
  std::string_view text_;
  uint64_t line_ = 0, offset_ = 0;
};

/// The whole texts in one libgit2 patch: the hunks exactly as sandboxd showed every diff before
/// big texts were diffed in windows.
void WholeHunks(std::string_view old_text, std::string_view new_text, int context_lines, HunkSink& sink) {
  GitPatch patch = MakeTextPatch(old_text, new_text, context_lines);
  LineOffsets old_lines(old_text), new_lines(new_text);
  const size_t count = git_patch_num_hunks(patch.get());
  for (size_t h = 0; h < count; ++h) {
    const git_diff_hunk* hunk = nullptr;
    size_t lines = 0;
    if (git_patch_get_hunk(&hunk, &lines, patch.get(), h) != 0)
      throw Error(Code::kFailed, "cannot read hunk " + std::to_string(h + 1) + " of a diff");
    std::string_view header(hunk->header, hunk->header_len);
    while (!header.empty() && header.back() == '\n') header.remove_suffix(1);
    uint64_t old_first = FirstLineOfRange(hunk->old_start, hunk->old_lines), new_first = FirstLineOfRange(hunk->new_start, hunk->new_lines);
    HunkPlace place;
    place.old_begin = old_lines.Of(old_first);
    place.old_end = old_lines.Of(old_first + static_cast<uint64_t>(hunk->old_lines));
    place.new_begin = new_lines.Of(new_first);
    place.new_end = new_lines.Of(new_first + static_cast<uint64_t>(hunk->new_lines));
    const int number = static_cast<int>(h + 1);
    sink.Hunk(number, header, place);
    if (!sink.WantsBody(number)) continue;
    std::string body;
    for (size_t l = 0; l < lines; ++l) {
      const git_diff_line* line = nullptr;
      if (git_patch_get_line_in_hunk(&line, patch.get(), h, l) != 0)
        throw Error(Code::kFailed, "cannot read hunk " + std::to_string(number) + " of a diff");
      switch (line->origin) {
        case GIT_DIFF_LINE_CONTEXT:
        case GIT_DIFF_LINE_ADDITION:
        case GIT_DIFF_LINE_DELETION:
          body += line->origin;
          body.append(line->content, line->content_len);
          if (line->content_len == 0 || line->content[line->content_len - 1] != '\n') body += '\n';
          break;
        case GIT_DIFF_LINE_CONTEXT_EOFNL:
        case GIT_DIFF_LINE_ADD_EOFNL:
        case GIT_DIFF_LINE_DEL_EOFNL:
          body += "\\ No newline at end of file\n";
          break;
        default:
          break;
      }
    }
    sink.Body(body);
  }
}

/// Texts too big for WholeHunks: runs found window by window, grouped into hunks as libgit2
/// groups them (change_finder.h, hunk_builder.h).
void WindowedHunks(const TextSource& old_text, const TextSource& new_text, int context_lines, HunkSink& sink,
                   const TextDiffLimits& limits) {
  HunkBuilder builder(old_text, new_text, context_lines, limits.hunk_runs, sink);
  FindChanges(old_text, new_text, limits, [&](const LineChange& run) { builder.Add(run); });
  builder.Finish();
}

/// The text in place when it is in memory, else read whole into `copy`.
std::string_view Whole(const TextSource& text, std::string& copy) {
  if (auto memory = text.InMemory()) return *memory;
  copy.resize(static_cast<size_t>(text.size()));
  text.Read(0, copy.size(), copy.data());
  return copy;
}

}  // namespace

void ForEachHunk(const TextSource& old_text, const TextSource& new_text, int context_lines, HunkSink& sink,
                 const TextDiffLimits& limits) {
  if (old_text.size() > limits.whole_bytes || new_text.size() > limits.whole_bytes) {
    WindowedHunks(old_text, new_text, context_lines, sink, limits);
    return;
  }
  std::string old_copy, new_copy;
  std::string_view old_view = Whole(old_text, old_copy), new_view = Whole(new_text, new_copy);
  // Short lines cost libgit2 far more than their bytes (a 16 MiB file of empty lines would take
  // it gigabytes): past whole_lines, even a small text goes by windows.
  uint64_t lines = static_cast<uint64_t>(std::count(old_view.begin(), old_view.end(), '\n') +
                                         std::count(new_view.begin(), new_view.end(), '\n'));
  if (lines <= limits.whole_lines) {
    WholeHunks(old_view, new_view, context_lines, sink);
    return;
  }
  MemoryText old_memory(old_view), new_memory(new_view);
  WindowedHunks(old_memory, new_memory, context_lines, sink, limits);
}

}  // namespace sandboxd
