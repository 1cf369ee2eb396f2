#pragma once
/// One entry of a sandbox's change set: what happened to one path of one root, as read from
/// the overlay's upper layer. Pure data; shared by the scanner (daemon, root), the diff and
/// commit code (sandboxd-helper, running as the owner) and the D-Bus faces.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandboxd {

enum class ChangeKind { kAdded, kModified, kDeleted, kTypeChanged, kModeChanged };

/// File type of one side of a change; kNone where that side does not exist.
enum class EntryType { kNone, kFile, kDirectory, kSymlink, kFifo, kSocket, kCharDevice, kBlockDevice };

struct Change {
  std::string path;        ///< relative to the root, no leading "/", never "." or ".."
  ChangeKind kind = ChangeKind::kAdded;
  EntryType old_type = EntryType::kNone;  ///< type in the live tree (lower); kNone when added
  EntryType new_type = EntryType::kNone;  ///< type in the sandbox (upper); kNone when deleted
  mode_t old_mode = 0;     ///< permission bits (07777) in the live tree; 0 when added
  mode_t new_mode = 0;     ///< permission bits (07777) in the sandbox; 0 when deleted

  bool operator==(const Change&) const = default;
};

/// Whether the sandbox's side of `change` is a regular file its owner cannot read (no owner read
/// bit; a job's files are its owner's): its content cannot be shown to them, so it is marked so
/// and approved or committed only when named by its own path, never by --all or a directory
/// above it (DESIGN, "Data safety").
inline bool UnreadableByOwner(const Change& change) {
  return change.new_type == EntryType::kFile && (change.new_mode & 0400) == 0;
}

/// "added", "modified", "deleted", "type-changed", "mode-changed" (the contract's words).
std::string_view ToString(ChangeKind kind);
std::optional<ChangeKind> ChangeKindFromString(std::string_view text);
/// The letter `sandboxctl changes` prints: A, M, D, T, P.
char ToLetter(ChangeKind kind);
/// "none", "file", "directory", "symlink", "fifo", "socket", "char-device", "block-device".
std::string_view ToString(EntryType type);
std::optional<EntryType> EntryTypeFromString(std::string_view text);
/// The EntryType of a st_mode (S_IFMT part).
EntryType EntryTypeFromMode(mode_t mode);

}  // namespace sandboxd
