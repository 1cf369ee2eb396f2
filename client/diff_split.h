#pragma once
/// Cutting the git-style diff that sandboxd writes into what `review` asks about: file sections
/// (one per `diff --git` line), each a header and its `@@` hunks, numbered from 1 in this order
/// as selectors number them (PATH:N). Pure text work, no D-Bus.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandboxctl {

struct FileSection {
  std::string path;                ///< P of "diff --git a/P b/P"; "" when the line cannot be read so
  std::string header;              ///< from "diff --git" to the first "@@" (mode, ---/+++, "Binary files" lines)
  std::vector<std::string> hunks;  ///< each from its "@@" line to the next, newlines kept
};

/// The file sections of `diff` in order; text before the first "diff --git" line is dropped.
std::vector<FileSection> SplitDiff(std::string_view diff);

/// P of a "diff --git a/P b/P" line (without its newline); nothing for any other line. P may
/// hold spaces: the two halves are told apart by being the same.
std::optional<std::string> DiffGitPath(std::string_view line);

/// The sections of `sections` that show the change at `change` among the changes at `changes`:
/// the diff of a directory PATH also holds the changes beneath it, which are changes of their
/// own. A section belongs to the deepest change at or above its path ("." is above every path);
/// one whose path could not be read belongs to `change`.
std::vector<FileSection> SectionsOfChange(const std::vector<FileSection>& sections, const std::string& change,
                                          const std::vector<std::string>& changes);

}  // namespace sandboxctl
