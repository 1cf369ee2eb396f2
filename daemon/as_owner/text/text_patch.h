#pragma once
/// The libgit2 calls behind every line diff of sandboxd, and the one rule for what counts as
/// text. Hunks are never taken from here directly but through ForEachHunk (text_hunks.h), which
/// `diff` (diff_writer), `hunks` and `merge` (hunk_merge) share, so hunk N of a commit is always
/// the hunk N the user saw.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

struct git_patch;

namespace sandboxd {

struct GitPatchDeleter {
  void operator()(git_patch* patch) const;
};
using GitPatch = std::unique_ptr<git_patch, GitPatchDeleter>;

/// Unified-diff patch of old → new text (no interhunk merging beyond `context_lines`, every byte
/// treated as text). Throws Error(kFailed) when libgit2 fails.
/// A unified-diff range as its 0-based first line: an empty range names the line before it.
inline uint64_t FirstLineOfRange(int start, int count) { return static_cast<uint64_t>(count == 0 ? start : start - 1); }

GitPatch MakeTextPatch(std::string_view old_text, std::string_view new_text, int context_lines);

/// One run of changed lines as libgit2 finds it: old lines [old_line, old_line + old_count)
/// give way to new lines [new_line, new_line + new_count), counted from 0.
struct ChangedLines {
  uint64_t old_line = 0, old_count = 0, new_line = 0, new_count = 0;
};

/// The runs of changed lines of old → new text, in order: the same line diff as MakeTextPatch
/// (same options), without context, so without hunks merged. libgit2 keeps no lines for it.
std::vector<ChangedLines> ChangedLineRuns(std::string_view old_text, std::string_view new_text);

/// As git: a file is binary when a NUL byte occurs in its first 8000 bytes.
bool LooksBinary(std::string_view content);
/// How many leading bytes LooksBinary looks at.
constexpr size_t kBinaryProbeBytes = 8000;

}  // namespace sandboxd
