#pragma once
/// The one libgit2 call behind every line diff of sandboxd, and the one rule for what counts as
/// text. `diff` (diff_writer) prints hunks from it and per-hunk commits (hunk_merge) number and
/// apply hunks from it, so hunk N of a commit is always the hunk N the user saw.

#include <cstddef>
#include <memory>
#include <string_view>

struct git_patch;

namespace sandboxd {

struct GitPatchDeleter {
  void operator()(git_patch* patch) const;
};
using GitPatch = std::unique_ptr<git_patch, GitPatchDeleter>;

/// Unified-diff patch of old → new text (no interhunk merging beyond `context_lines`, every byte
/// treated as text). Throws Error(kFailed) when libgit2 fails.
GitPatch MakeTextPatch(std::string_view old_text, std::string_view new_text, int context_lines);

/// As git: a file is binary when a NUL byte occurs in its first 8000 bytes.
bool LooksBinary(std::string_view content);

}  // namespace sandboxd
