#pragma once
/// Reading the two sides of a text modification for per-hunk commits, in sandboxd-helper as the
/// owner: every path is opened beneath its root without following a symlink, and "text" follows
/// the diff's rule (a regular file of at most max_text_bytes with no NUL in its first 8000
/// bytes), so a file gets hunks here exactly when `diff` shows it hunks.

#include <cstddef>
#include <optional>
#include <string>

#include "change.h"

namespace sandboxd {

/// The content of regular file `path` beneath `root_fd`, or nullopt with the reason in `why_not`
/// when it is missing, not a regular file, unreadable, too large or binary. Never reads more
/// than max_text_bytes + 1 bytes. Throws Error(kFailed) on a read error midway.
std::optional<std::string> ReadTextFile(int root_fd, const std::string& path, size_t max_text_bytes,
                                        std::string* why_not = nullptr);

struct TextModification {
  std::string old_text;  ///< the live file
  std::string new_text;  ///< the sandbox's file
};

/// Both sides of `path` when it is a text file in the live root and in the upper layer, else
/// nullopt with the reason (naming the side) in `why_not`.
std::optional<TextModification> ReadTextModification(int live_fd, int upper_fd, const std::string& path,
                                                     size_t max_text_bytes, std::string* why_not = nullptr);

/// True for a change that can be committed hunk by hunk, judged from its kinds alone: a regular
/// file modified in place (its content may still turn out binary; see ReadTextModification).
bool MayHaveHunks(const Change& change);

}  // namespace sandboxd
