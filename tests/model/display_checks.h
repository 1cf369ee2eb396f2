#pragma once
/// What the display-equals-commit property compares (display_commit_test.cpp): trees as git
/// keeps them, the hunks of a diff as `diff` prints them, and what a diff's content lines look
/// like once rendered for a terminal. Pure, but for reading a tree.

#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sandboxd::display {

/// Relative path -> what git keeps of it: "100644"/"100755"/"120000" (the type and, of the
/// permission bits, the owner's x bit only), the owner, the content or the symlink's target.
/// Directories are left out: a patch cannot make an empty one and `git apply` removes one it
/// emptied, so a directory is compared through the files it holds. So is a git work tree's .git.
using GitView = std::map<std::string, std::string>;
/// Read a level at a time: a tree deeper than PATH_MAX is read whole.
GitView ViewAsGit(const std::string& dir);

/// lstat of `path` (relative) beneath `dir`, opened a level at a time (a path longer than
/// PATH_MAX is found); nullopt when it is not there.
std::optional<struct stat> StatBeneath(const std::string& dir, const std::string& path);

/// A new file of a path longer than PATH_MAX, which git cannot apply (it hands whole paths to
/// the kernel): its path, mode and content as a diff shows them.
struct DeepFile {
  std::string path;
  mode_t mode = 0644;
  std::string content;
};
/// Takes the sections of `patch` whose path is longer than `longer_than` bytes out of it; each
/// must be a new text file's (what the generator makes that deep). Throws std::runtime_error on
/// one that is not.
std::vector<DeepFile> TakeDeepSections(std::string& patch, size_t longer_than);
/// Writes `file` beneath `dir` as `owner`, making its directories (0755), a level at a time.
void WriteBeneath(const std::string& dir, const DeepFile& file, uid_t owner);

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
