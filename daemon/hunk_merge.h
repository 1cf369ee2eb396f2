#pragma once
/// Per-hunk partial commits: the text a live file gets when only some of the hunks of its change
/// are approved. Hunks are numbered from 1 exactly as `diff` prints them, because both come from
/// the same patch (text_patch.h). Pure: no I/O; sandboxd-helper reads and writes the files.

#include <cstddef>
#include <set>
#include <string>
#include <string_view>

namespace sandboxd {

/// How many `@@` hunks `diff` shows for old → new text (0 when they are equal).
size_t CountHunks(std::string_view old_text, std::string_view new_text, int context_lines = 3);

/// `old_text` with exactly the hunks numbered in `approved` taken from `new_text` and every other
/// line as in `old_text`: all hunks give `new_text`, none gives `old_text`, byte for byte (no
/// trailing newline and CRLF lines included). Afterwards the diff to `new_text` holds exactly the
/// changed lines of the hunks that were not approved, but not always cut into the same hunks:
/// with repeated lines (blank ones will do) the diff may group them differently (the fuzzer's
/// seed fuzz/corpus/hunk_merge/ambiguous-blank-lines), so hunk numbers never carry across a
/// partial commit: a decision holds only for the content it was made on (approval.h). A number outside
/// 1..CountHunks throws Error(kNotFound).
std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const std::set<int>& approved,
                       int context_lines = 3);

}  // namespace sandboxd
