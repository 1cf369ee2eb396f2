#pragma once
/// What a sandbox costs on disk: the bytes and entries of its upper layers (the changes, what a
/// quota counts), of its archives while suspended, and of what its commits keep for undo. Read
/// as root from the daemon's own directories, never through a symlink; each inode counted once.

#include <cstdint>
#include <string>

#include "sandbox/sandbox.h"

namespace sandboxd {

struct TreeUsage {
  uint64_t bytes = 0;    ///< allocated on disk (st_blocks), so sparse files count what they hold
  uint64_t entries = 0;  ///< files, directories, symlinks, ... below the top (not counting it)
};

/// Everything beneath directory `path`; a missing one uses nothing.
TreeUsage MeasureTree(const std::string& path);

struct SandboxUsage {
  TreeUsage changes;         ///< upper layers (nothing while suspended)
  uint64_t archive_bytes = 0;  ///< suspend's archives
  uint64_t kept_bytes = 0;   ///< commit areas: what undo restores from
  uint64_t total() const { return changes.bytes + archive_bytes + kept_bytes; }
};

SandboxUsage MeasureSandbox(const Sandbox& sandbox);

/// The bytes of the sandbox's upper layers: what its quota counts.
uint64_t ChangesBytes(const Sandbox& sandbox);


}  // namespace sandboxd
