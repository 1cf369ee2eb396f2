#pragma once
/// A file's handle (name_to_handle_at(2)): its file system's own name for the inode, which a
/// rename keeps, a reboot keeps (on disk file systems), and a file made anew at the same path
/// does not. Only the handle's type and bytes, never the mount id (another at every mount).

#include <optional>
#include <string>

namespace sandboxd {

struct FileHandle {
  int type = 0;
  std::string bytes;

  /// "<type>:<bytes in hex>": how a record keeps it.
  std::string ToText() const;
  bool operator==(const FileHandle&) const = default;
};

/// The handle of what `fd` is open on (an O_PATH descriptor will do); none when its file system
/// gives none (it cannot be exported: procfs, some FUSE file systems).
std::optional<FileHandle> FileHandleOf(int fd);

/// The text of FileHandleOf, or "" when there is none.
std::string FileHandleText(int fd);

}  // namespace sandboxd
