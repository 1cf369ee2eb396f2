#pragma once
/// File content for a terminal (DESIGN, "Data safety": on a terminal every control byte of
/// content but TAB is shown visibly). A job chooses every byte of what a person reviews; a NUL
/// that ends a C string, a CR or an escape sequence must not hide, rewrite or move what is shown,
/// so that the bytes a person approves are the bytes they saw. Each such byte is written as
/// `cat -v` and less write it (^@, ^M, ^[, ^?), marked (reverse video, by default) so that it
/// cannot pass for the same characters typed into the file. Also marked, as less marks them:
/// C1 controls (<U+009B>, which some terminals obey like ESC [), bidirectional controls
/// (<U+202E>, which reorder what a line shows: "Trojan Source") and bytes that are not UTF-8
/// (<9B>). Never used on a pipe or in --json, which carry the exact bytes.

#include <string>
#include <string_view>

namespace sandboxctl {

/// How a marked byte is set apart from the text around it: what comes before and after it.
struct VisibleMarks {
  std::string_view on = "\033[7m";    ///< reverse video on
  std::string_view off = "\033[27m";  ///< and off again, keeping the line's own colour
};

/// `line` (one line of content, without its newline) with every byte that could steer a
/// terminal written visibly, each between `marks.on` and `marks.off`; TAB and printable text
/// stay as they are. Pure: the same bytes always give the same text.
std::string VisibleBytes(std::string_view line, VisibleMarks marks = {});

}  // namespace sandboxctl
