#pragma once
/// Copying and removing whole directory trees between directory fds, for commits whose layers
/// are on another file system than their root (landing_area.h): entries cannot be renamed across,
/// so they are copied. Never follows a symlink, never leaves the trees it is given (every entry
/// is reached by openat from its parent's fd with O_NOFOLLOW), never reads a file whole into
/// memory, and never opens anything but a regular file for reading (a device node or fifo
/// opened by mistake could block or act).

#include <string>
#include <vector>

namespace sandboxd {

struct TreeCopyOptions {
  /// Give each copy the owner (uid and gid) of its original: only root can, and only the
  /// daemon's own copies into its state directory want it.
  bool keep_owner = false;
  /// Mark each copy with the inode number of its original (xattr kOriginAttribute, root only),
  /// so that an undo can tell which entries its copies stand for (landing_area.h).
  bool record_origin = false;
};

inline constexpr const char* kOriginAttribute = "trusted.sandboxd.origin";

/// Copies the contents of directory `from_dir` into directory `to_dir` (which must hold none of
/// the names): directories, regular files (reflinked where the file system can, else
/// copy_file_range, else a bounded buffer), symlinks and fifos, with their permission bits
/// (setuid included) and times. Two names of one inode stay two names of one inode. Whiteouts,
/// sockets and device nodes are left out. Nothing is synced: call syncfs once after. Throws
/// Error naming the path (relative to `from_dir`).
void CopyTree(int from_dir, int to_dir, const TreeCopyOptions& options = {});

struct TreeCopy {
  int from_dir;
  int to_dir;
};
/// CopyTree of several trees in order, as one copy: two names of one inode in any of them stay
/// two names of one inode (a commit's replaced and removed entries may be names of one file).
/// The copies must be on one file system.
void CopyTrees(const std::vector<TreeCopy>& trees, const TreeCopyOptions& options = {});

/// Copies one regular file's content from `from` to `to` (both open), without holding it in
/// memory. `shown` names it in errors.
void CopyFileContent(int from, int to, const std::string& shown);

/// Removes `name` in directory `parent`, with everything beneath it when it is a directory,
/// never following a symlink (a symlink is removed itself). Missing is fine. Throws Error
/// naming `shown`.
void RemoveTreeAt(int parent, const std::string& name, const std::string& shown);

}  // namespace sandboxd
