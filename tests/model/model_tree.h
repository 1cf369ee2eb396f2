#pragma once
/// File trees as the model sees them: one entry per path (files, directories, symlinks), with
/// content, permission bits and, for files, the hard-link group they belong to. The same type
/// holds what the model expects and what the real tree holds, so the two compare directly.

#include <map>
#include <string>

namespace sandboxd::model {

struct Entry {
  char type = 'f';   ///< 'f' file, 'd' directory, 'l' symlink
  std::string data;  ///< a file's content or a symlink's target
  unsigned mode = 0644;
  /// Files only: names with the same non-zero group are one inode (a hard link). Ids mean
  /// nothing across trees; only the partition they make is compared.
  long group = 0;
};

/// Path (relative, raw bytes, no leading "./") -> entry; the root itself is not in it.
using Tree = std::map<std::string, Entry>;

/// Reads a real directory as root: lstat walk, raw names (any byte but '/' and NUL), contents
/// read whole, groups from inode numbers (only inodes named more than once inside the tree).
Tree ReadTree(const std::string& dir);

/// "" when equal; otherwise one line per difference (at most `limit`), names quoted for people.
/// Hard-link groups compare as partitions: {a,b} in one tree must be {a,b} in the other.
std::string CompareTrees(const Tree& expected, const Tree& actual, bool compare_groups = true, size_t limit = 12);

/// One entry for a message: "file 0644 \"text...\"", "symlink -> t", "dir 0755".
std::string DescribeEntry(const Entry& entry);

}  // namespace sandboxd::model
