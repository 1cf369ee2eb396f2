#pragma once
/// Per-hunk partial commits: the text a live file gets when only some of the hunks of its change
/// are approved. Hunks are numbered from 1 exactly as `diff` prints them, because both come from
/// ForEachHunk (text_hunks.h). Pure: no I/O of its own; sandboxd-text-helper opens the files and
/// writes the result.

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "model/hunk_pick.h"
#include "text/text_hunks.h"
#include "text/text_source.h"

namespace sandboxd {

/// How many `@@` hunks `diff` shows for old → new text (0 when they are equal).
size_t CountHunks(const TextSource& old_text, const TextSource& new_text, int context_lines = 3,
                  const TextDiffLimits& limits = {});
size_t CountHunks(std::string_view old_text, std::string_view new_text, int context_lines = 3);

/// `old_text` with exactly the hunks numbered in `approved` taken from `new_text` and every other
/// byte as in `old_text`, handed to `out` in pieces as it is made (a hunk or a stretch between
/// two costs a block of memory, not its size): all hunks give `new_text`, none gives
/// `old_text`, byte for byte (no trailing newline and CRLF lines included). Afterwards the diff
/// to `new_text` holds exactly the changed lines of the hunks that were not approved, but not
/// always cut into the same hunks: with repeated lines (blank ones will do) the diff may group
/// them differently (the fuzzer's seed fuzz/corpus/hunk_merge/ambiguous-blank-lines), so hunk
/// numbers never carry across a partial commit: a decision holds only for the content it was
/// made on (approval.h). A number below 1 throws Error(kNotFound) before `out` gets anything;
/// one past the last hunk throws it at the end, so a caller must drop what `out` got whenever
/// this throws.
void MergeHunks(const TextSource& old_text, const TextSource& new_text, const std::set<int>& approved,
                const std::function<void(std::string_view)>& out, int context_lines = 3, const TextDiffLimits& limits = {});
/// MergeHunks of the hunks `pick.hunks` whole and, of each hunk in `pick.parts`, only the parts
/// named (hunk_parts.h): its other parts stay as in `old_text`. A part number past the hunk's
/// last part throws Error(kNotFound) (`out` may have got some of the text by then).
void MergeHunks(const TextSource& old_text, const TextSource& new_text, const HunkPick& pick,
                const std::function<void(std::string_view)>& out, int context_lines = 3, const TextDiffLimits& limits = {});

/// MergeHunks into a string.
std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const std::set<int>& approved,
                       int context_lines = 3);
std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const HunkPick& pick, int context_lines = 3);

}  // namespace sandboxd
