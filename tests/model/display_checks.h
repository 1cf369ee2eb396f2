#pragma once
/// What the display-equals-commit property compares (display_commit_test.cpp): trees as git
/// keeps them, the hunks of a diff as `diff` prints them, and what a diff's content lines look
/// like once rendered for a terminal. Pure, but for reading a tree.

#include <map>
#include <string>
#include <vector>

namespace sandboxd::display {

/// Relative path -> what git keeps of it: "100644"/"100755"/"120000" (the type and, of the
/// permission bits, the owner's x bit only), the owner, the content or the symlink's target.
/// Directories are left out: a patch cannot make an empty one and `git apply` removes one it
/// emptied, so a directory is compared through the files it holds. So is a git work tree's .git.
using GitView = std::map<std::string, std::string>;
GitView ViewAsGit(const std::string& dir);

/// The paths where `committed` and `patched` differ, a line each (at most 12, then a count),
/// each side shown around the first byte where they part (it::DescribeMismatch shows the
/// first 40 bytes of each, which a difference further on does not reach).
std::string DescribeDifferences(const GitView& committed, const GitView& patched);

/// The hunks of `diff` (each from its "@@" line to the next "@@" or "diff --git" line, newlines
/// kept), in order.
std::vector<std::string> HunksOf(const std::string& diff);

/// The content lines of `diff` (in its hunks: ' ', '-' and '+' lines) whose terminal rendering
/// (client/visible_bytes.h) would still let a byte steer the terminal: a control byte but TAB,
/// DEL, a C1 or bidirectional control, a byte that is not UTF-8, or fewer characters than bytes
/// (a byte dropped). One line each, "" when none.
std::string TerminalLeaks(const std::string& diff);

/// `bytes` for a failure message: newlines kept, every other byte that is not printable ASCII
/// as \ooo, cut after `limit` bytes.
std::string Shown(const std::string& bytes, size_t limit = 4000);

}  // namespace sandboxd::display
