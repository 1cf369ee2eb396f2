// Hostile input: the two texts of a changed file (the sandbox's side written by a job), turned
// into the line patch that `diff` prints and per-hunk commits apply (text_patch.h). Input: one
// byte of context lines (mod 6), then the old text, a NUL byte and the new text. Beyond not
// crashing: the patch is true to both texts, i.e. every context and removed line is the old
// text's line at its number, every context and added line the new text's, and the old text with
// the patch applied is the new text byte for byte (last lines without a newline included); and
// LooksBinary is git's rule, a NUL byte in the first 8000.

#include <git2.h>

#include <string>
#include <string_view>
#include <vector>

#include "check.h"
#include "text/text_patch.h"

namespace sandboxd::fuzz {
namespace {

/// The lines of `text`, each with its newline (the last without, when the text has none).
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size() - 1) + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

bool LineAt(const std::vector<std::string_view>& lines, int number, std::string_view content) {
  return number >= 1 && static_cast<size_t>(number) <= lines.size() && lines[number - 1] == content;
}

/// `old_text` with `patch` applied, checking each line of the patch against both texts.
std::string Applied(git_patch* patch, std::string_view old_text, std::string_view new_text) {
  auto old_lines = Lines(old_text), new_lines = Lines(new_text);
  std::string out;
  size_t old_done = 0;  // old lines [0, old_done) are in `out` or removed
  for (size_t h = 0; h < git_patch_num_hunks(patch); ++h) {
    const git_diff_hunk* hunk = nullptr;
    size_t line_count = 0;
    Require(git_patch_get_hunk(&hunk, &line_count, patch, h) == 0, "every hunk can be read");
    // Unchanged lines up to the hunk; an empty old range is numbered by the line before it.
    size_t before = static_cast<size_t>(hunk->old_lines == 0 ? hunk->old_start : hunk->old_start - 1);
    Require(before >= old_done && before <= old_lines.size(), "hunks come in order, within the old text");
    for (; old_done < before; ++old_done) out += old_lines[old_done];
    for (size_t l = 0; l < line_count; ++l) {
      const git_diff_line* line = nullptr;
      Require(git_patch_get_line_in_hunk(&line, patch, h, l) == 0, "every line can be read");
      std::string_view content(line->content, line->content_len);
      bool in_old = line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_DELETION;
      bool in_new = line->origin == GIT_DIFF_LINE_CONTEXT || line->origin == GIT_DIFF_LINE_ADDITION;
      if (in_old) {
        Require(LineAt(old_lines, line->old_lineno, content), "context and removed lines are the old text's");
        Require(static_cast<size_t>(line->old_lineno) == old_done + 1, "a hunk's old lines follow each other");
        old_done = line->old_lineno;
      }
      if (in_new) {
        Require(LineAt(new_lines, line->new_lineno, content), "context and added lines are the new text's");
        out += content;
      }
    }
  }
  for (; old_done < old_lines.size(); ++old_done) out += old_lines[old_done];
  return out;
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  using fuzz::Require;
  if (size < 1) return 0;
  int context = data[0] % 6;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t nul = rest.find('\0');
  std::string_view old_text = rest.substr(0, nul);
  std::string_view new_text = rest.substr(nul == std::string_view::npos ? rest.size() : nul + 1);

  GitPatch patch = MakeTextPatch(old_text, new_text, context);
  Require(fuzz::Applied(patch.get(), old_text, new_text) == new_text, "the old text patched is the new text");
  for (std::string_view text : {old_text, new_text, rest})
    Require(LooksBinary(text) == (text.substr(0, 8000).find('\0') != std::string_view::npos), "binary means a NUL byte in the first 8000");
  return 0;
}
