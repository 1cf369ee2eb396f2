#pragma once
/// Whether a path holds the same content in the live root and in the upper layer, read in
/// sandboxd-helper as the owner. Lets the daemon tell a change that a commit has already carried
/// (or that the live tree has caught up with) from one that is still pending.

#include <string>

namespace sandboxd {

/// True when `path` is, beneath both `live_fd` and `upper_fd` (opened without following any
/// symlink), a regular file with byte-identical content (compared in chunks, never read whole)
/// or a symlink with the same target. Anything else, a missing or unreadable side included, is
/// not the same. Modes and owners are not compared. Throws Error(kInvalidPath) for a path that
/// is not relative, Error(kFailed) on a read error midway.
bool SameContent(int live_fd, int upper_fd, const std::string& path);
/// The same, for `live_path` in the live root against `upper_path` in the upper layer (a rename).
bool SameContent(int live_fd, const std::string& live_path, int upper_fd, const std::string& upper_path);

}  // namespace sandboxd
