#pragma once
/// Small file-system helpers for the daemon's own directories (state, run, trash). They never
/// follow symlinks, because the trees they remove once held a user's files.

#include <sys/types.h>

#include <string>
#include <vector>

#include "unique_fd.h"

namespace sandboxd {

/// The daemon's own uid or gid (root's in system mode, the user's in user mode).
inline constexpr uid_t kOwnId = static_cast<uid_t>(-1);
/// mkdir with exactly `mode` (umask ignored) and the given owner; an existing directory is
/// re-moded and re-owned. Throws Error(kFailed).
void MakeDirectory(const std::string& path, mode_t mode, uid_t uid = kOwnId, gid_t gid = kOwnId);
/// Makes directory `path` (which must not exist) whole or not at all: made beside it as
/// `path`.new, given `mode` and its owner there, then renamed into place. A kill at any instant
/// leaves either no `path` or one with its owner and mode, never a bare root-owned 0700 one that
/// a later look takes for made (an overlay's upper root gives the merged view its owner and
/// mode); a `path`.new a kill left is removed first. Throws Error(kFailed).
void MakeDirectoryWhole(const std::string& path, mode_t mode, uid_t uid = kOwnId, gid_t gid = kOwnId);
/// mkdir -p for the daemon's own directories, mode 0755 for created parents.
void MakeDirectories(const std::string& path, mode_t mode);
/// rm -rf without following symlinks; a missing path is fine. Throws Error(kFailed).
void RemoveTree(const std::string& path);
/// Removes everything in directory `path` without following symlinks, keeping the directory
/// itself (its owner and mode): a kill at any instant leaves the directory. Throws Error(kFailed)
/// when it is missing or cannot be emptied.
void EmptyDirectory(const std::string& path);
/// Opens `path` (absolute) refusing any symlink on the way (openat2 RESOLVE_NO_SYMLINKS).
UniqueFd OpenDirectoryNoSymlinks(const std::string& path, int flags);
/// 16 lowercase hex digits from getrandom.
std::string RandomId();
/// True for what RandomId makes.
bool LooksLikeId(const std::string& name);
/// syncfs of the file system holding the directory `dir_fd`. Throws Error(kFailed) naming `shown`.
void SyncFileSystemOf(int dir_fd, const std::string& shown);
/// The names in directory `path` (no "." or ".."); a missing directory has none.
std::vector<std::string> ListDirectory(const std::string& path);

}  // namespace sandboxd
