#pragma once
/// Which files are text, and opening the two sides of a text modification for `hunks` and
/// `merge`, in sandboxd-text-helper as the owner: every path is opened beneath its root without
/// following a symlink, and "text" is the diff's rule, git's (a regular file of at most
/// max_text_bytes, by default git's core.bigFileThreshold, with no NUL in its first 8000 bytes),
/// so a file gets hunks here exactly when `diff` shows it hunks.

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "unique_fd.h"
#include "model/change.h"
#include "text/text_source.h"

namespace sandboxd {

/// git's core.bigFileThreshold: bigger files are binary to `git diff` whatever they hold.
constexpr uint64_t kBigFileThreshold = uint64_t{512} << 20;

/// Why the open regular file `file` is not text for a diff ("" when it is): too large, or a NUL
/// byte in its first 8000 bytes. Reads at most those 8000 bytes.
std::string NotTextBecause(const TextSource& file, uint64_t max_text_bytes);

/// Opens regular file `name` in directory `parent_fd` for reading, without following a symlink,
/// never hanging on a fifo put there after a stat; null with errno set when it cannot, or when
/// it is no regular file (errno EINVAL). `shown` names it in later errors.
std::unique_ptr<FileText> OpenRegularFile(int parent_fd, const std::string& name, const std::string& shown);

/// Regular file `path` beneath `root_fd` when it is text, or null with the reason in `why_not`
/// when it is missing, not a regular file, unreadable, too large or binary. `shown` names it in
/// later errors (default: `path`).
std::unique_ptr<FileText> OpenTextFile(int root_fd, const std::string& path, uint64_t max_text_bytes,
                                       std::string* why_not = nullptr, const std::string& shown = "");

/// The content of OpenTextFile's file, read whole; for small files (tests, callers that need a
/// string). Throws Error(kFailed) on a read error midway.
std::optional<std::string> ReadTextFile(int root_fd, const std::string& path, size_t max_text_bytes,
                                        std::string* why_not = nullptr);

struct TextFiles {
  std::unique_ptr<FileText> old_text;  ///< the live file
  std::unique_ptr<FileText> new_text;  ///< the sandbox's file
};

/// Both sides of `path` when it is a text file in the live root and in the upper layer, else
/// nullopt with the reason (naming the side) in `why_not`. Later errors name the side too
/// ("the live file changed while it was read").
std::optional<TextFiles> OpenTextModification(int live_fd, int upper_fd, const std::string& path, uint64_t max_text_bytes,
                                              std::string* why_not = nullptr);

struct TextModification {
  std::string old_text;  ///< the live file
  std::string new_text;  ///< the sandbox's file
};

/// OpenTextModification's two files, read whole (for small files).
std::optional<TextModification> ReadTextModification(int live_fd, int upper_fd, const std::string& path,
                                                     size_t max_text_bytes, std::string* why_not = nullptr);

/// True for a change that can be committed hunk by hunk, judged from its kinds alone: a regular
/// file modified in place (its content may still turn out binary; see OpenTextModification).
bool MayHaveHunks(const Change& change);

}  // namespace sandboxd
