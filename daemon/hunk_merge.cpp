#include "hunk_merge.h"

#include <git2.h>

#include <algorithm>
#include <vector>

#include "errors.h"
#include "text_patch.h"

namespace sandboxd {
namespace {

/// The lines of `text` as libgit2 splits them: each with its '\n' (a '\r' before it stays part
/// of the line), the last one without when the text does not end in a newline. Joining them
/// gives `text` back byte for byte.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

/// One hunk's line range on one side, as 0-based [begin, begin + count). Unified diffs number an
/// empty range by the line before it ("-3,0" inserts after line 3, "-0,0" at the very start).
struct LineRange {
  size_t begin = 0;
  size_t count = 0;
};

LineRange RangeOf(int start, int count) {
  if (count == 0) return {static_cast<size_t>(start), 0};
  return {static_cast<size_t>(start - 1), static_cast<size_t>(count)};
}

void Append(std::string& out, const std::vector<std::string_view>& lines, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) out.append(lines[i]);
}

std::string HunkCountText(size_t count) { return std::to_string(count) + (count == 1 ? " hunk" : " hunks"); }

}  // namespace

size_t CountHunks(std::string_view old_text, std::string_view new_text, int context_lines) {
  return git_patch_num_hunks(MakeTextPatch(old_text, new_text, context_lines).get());
}

std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const std::set<int>& approved,
                       int context_lines) {
  GitPatch patch = MakeTextPatch(old_text, new_text, context_lines);
  size_t hunk_count = git_patch_num_hunks(patch.get());
  for (int number : approved)
    if (number < 1 || static_cast<size_t>(number) > hunk_count)
      throw Error(Code::kNotFound, "hunk " + std::to_string(number) + " does not exist: the change has " + HunkCountText(hunk_count));

  std::vector<std::string_view> old_lines = SplitLines(old_text);
  std::vector<std::string_view> new_lines = SplitLines(new_text);
  std::string merged;
  merged.reserve(std::max(old_text.size(), new_text.size()));
  size_t old_done = 0;  // old lines [0, old_done) are in `merged` already (or replaced)
  for (size_t h = 0; h < hunk_count; ++h) {
    const git_diff_hunk* hunk = nullptr;
    size_t line_count = 0;
    if (git_patch_get_hunk(&hunk, &line_count, patch.get(), h) != 0)
      throw Error(Code::kFailed, "cannot read hunk " + std::to_string(h + 1) + " of a diff");
    LineRange old_range = RangeOf(hunk->old_start, hunk->old_lines);
    LineRange new_range = RangeOf(hunk->new_start, hunk->new_lines);
    // Hunks come in order and never overlap; anything else would silently corrupt a user's file.
    if (old_range.begin < old_done || old_range.begin + old_range.count > old_lines.size() ||
        new_range.begin + new_range.count > new_lines.size())
      throw Error(Code::kFailed, "hunk " + std::to_string(h + 1) + " of a diff does not fit its file");
    Append(merged, old_lines, old_done, old_range.begin);
    if (approved.count(static_cast<int>(h + 1)) != 0) {
      Append(merged, new_lines, new_range.begin, new_range.begin + new_range.count);
    } else {
      Append(merged, old_lines, old_range.begin, old_range.begin + old_range.count);
    }
    old_done = old_range.begin + old_range.count;
  }
  Append(merged, old_lines, old_done, old_lines.size());
  return merged;
}

}  // namespace sandboxd
