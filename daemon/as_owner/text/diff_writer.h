#pragma once
/// Git-style unified diffs of a change set, the live tree (old side) against the sandbox's
/// upper layer (new side). Hunks come from ForEachHunk (text_hunks.h), as `hunks` and `merge`
/// count and apply them. Runs in sandboxd-text-helper as the owner; every file is opened
/// beneath its root without following symlinks. A file bigger than max_text_bytes (git's
/// core.bigFileThreshold) or with a NUL in its first 8000 bytes is shown as binary, as git
/// shows it: an `index OLD..NEW` line of git's blob ids and "Binary files ... differ", or with
/// DiffOptions::binary git's binary patch, so that `git apply` reads the diff as it reads git's
/// own. No text file is held in memory whole past TextDiffLimits::whole_bytes, no binary file
/// at all, and WriteDiff streams its output, so its memory does not grow with the files' sizes.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/change.h"
#include "model/renames.h"
#include "text/text_file.h"
#include "selector.h"
#include "text/text_hunks.h"

namespace sandboxd {

struct DiffOptions {
  std::string path_prefix;              ///< "N/" for root N of a multi-root sandbox, else ""
  uint64_t max_text_bytes = kBigFileThreshold;  ///< larger files are shown as binary
  int context_lines = 3;
  TextDiffLimits text_limits;           ///< how hunks are found (the same for `hunks` and `merge`)
  /// Per change path, the only hunks (1-based) to show of it (`diff PATH:N`), or parts of hunks
  /// (`diff PATH:N.M`: the part as review's `s` shows it, hunk_split.h); a change not here is
  /// shown whole. A hunk or part it does not have is an error (WriteDiff).
  std::map<std::string, std::set<api::HunkRef>> only_hunks;
  /// WriteDiff gives up (Error kFailed) when its output takes nothing for this long; 0: never.
  int64_t output_stall_ms = 0;
  /// As `git diff --binary`: binary files as git's binary patches (binary_patch.h) with full
  /// blob ids on their index lines, which `git apply` needs to apply them, and an abbreviated
  /// index line on text diffs too. Without it a binary file is "Binary files ... differ" after
  /// an abbreviated index line (the data to apply it is not there). A side that could not be
  /// read gets no patch either way.
  bool binary = false;
};

struct Hunk {
  std::string header;  ///< "@@ -1,3 +1,4 @@ ..." without its newline
  std::string body;    ///< the lines with their ' ', '-', '+' prefixes, "\ No newline..." lines
};

struct FileDiff {
  std::string header;        ///< "diff --git ..." and the mode, index, ---/+++ or "Binary files" lines, or a binary patch
  std::vector<Hunk> hunks;   ///< numbered from 1 in this order
  std::string Text() const;
};

/// The file diffs of one change (a type change or a deleted directory gives several; an added
/// directory none).
std::vector<FileDiff> DiffChange(const Change& change, int lower_dirfd, int upper_dirfd, const DiffOptions& options);

/// The diff of a rename: "rename from"/"rename to" (and the modes when they differ), no hunks,
/// since both sides have the same content.
FileDiff DiffRename(const Rename& rename, int lower_dirfd, int upper_dirfd, const DiffOptions& options);

/// Writes the diffs of `changes` to `out_fd`, each of `renames` as one diff where its added half
/// is. False if the reader went away (EPIPE). Throws Error(kNotFound) naming the change before
/// anything is written when options.only_hunks asks for a hunk that its change does not have.
bool WriteDiff(const std::vector<Change>& changes, int lower_dirfd, int upper_dirfd, const DiffOptions& options,
               int out_fd, const std::vector<Rename>& renames = {});

}  // namespace sandboxd
