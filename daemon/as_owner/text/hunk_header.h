#pragma once
/// The "@@ -1,3 +1,4 @@ context" line of a hunk, written as libgit2 writes it, for hunks that
/// are grouped outside libgit2 (hunk_builder.h): a hunk of a big text reads like one of a small
/// text. The rules, from libgit2 1.5 (xemit.c, diff_driver.c, diff_xdiff.c): a count of 1 is
/// left out; an empty range names the line before it; the context is the nearest line before
/// the hunk that starts with an ASCII letter, '_' or '$' (libgit2's default "function" rule),
/// without trailing whitespace, cut to 80 bytes; the whole line is cut to 127 bytes and then
/// before the first byte that is not part of valid UTF-8.

#include <cstdint>
#include <string>
#include <string_view>

#include "text/text_reader.h"

namespace sandboxd {

/// The header of a hunk over old lines [old_first, old_first + old_count) and new lines
/// [new_first, ...), counted from 0, with `context` the function line's text ("" for none).
std::string FormatHunkHeader(uint64_t old_first, uint64_t old_count, uint64_t new_first, uint64_t new_count,
                             std::string_view context);

/// Finds the function line of each hunk in turn, in the old text, reading each line at most once
/// over all hunks: it looks back from a hunk only as far as the previous hunk's first line,
/// since what is before that was the previous answer.
class FunctionLines {
 public:
  explicit FunctionLines(const TextSource& old_text) : reader_(old_text) {}
  /// The context of a hunk whose first line starts at `line_begin`; calls come in increasing order.
  const std::string& Before(uint64_t line_begin);

 private:
  TextReader reader_;
  uint64_t searched_ = 0;  ///< lines before this offset were looked at
  std::string found_;
};

}  // namespace sandboxd
