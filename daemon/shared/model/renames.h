#pragma once
/// Renames in a change set: a deleted file (or symlink) and an added one of the same type with
/// identical content are one rename, shown as such by `changes` and `diff`, decided together and
/// committed as one rename of the live entry. Found in two steps: the daemon proposes pairs from
/// metadata (same type and size, the deletion a whiteout of its own, not an entry hidden by a
/// replaced directory), and sandboxd-helper confirms them by content as the owner, so that
/// nobody learns through a rename whether a file they cannot read equals one they wrote.

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/change.h"

namespace sandboxd {

struct Rename {
  std::string from;  ///< the deleted path (live side)
  std::string to;    ///< the added path (sandbox side)
  bool operator==(const Rename&) const = default;
};

/// Root index → the renames among that root's changes.
using SandboxRenames = std::map<size_t, std::vector<Rename>>;

/// One side of a possible rename, as metadata shows it.
struct RenameSide {
  std::string path;
  EntryType type = EntryType::kNone;
  off_t size = 0;
};

/// For each added path (in the order given), the deleted paths it may have been renamed from,
/// most likely first (same file name first, then path order), at most kMaxRenameTries of them.
using RenameCandidates = std::vector<std::pair<std::string, std::vector<std::string>>>;
inline constexpr size_t kMaxRenameTries = 8;

/// Pure matching by type and size. Empty files are never renames (every empty file would be a
/// rename of every other), nor are entries other than files and symlinks.
RenameCandidates MatchRenameCandidates(const std::vector<RenameSide>& deleted, const std::vector<RenameSide>& added);

/// Only files and symlinks are ever halves of a rename.
bool MayBeRenamed(EntryType type);

/// Whether `changes` has a deleted and an added file or symlink at all: when not, there is
/// nothing to propose and no need to ask the helper.
bool MayHaveRenames(const std::vector<Change>& changes);

/// The candidates of one root's `changes`, reading sizes as root (metadata only) beneath the
/// live root and the upper layer without following symlinks.
RenameCandidates ProposeRenames(int live_fd, int upper_fd, const std::vector<Change>& changes);

/// Run as the owner: the candidates whose contents are identical (files byte for byte,
/// symlinks by target), each deleted path taken by one added path at most, those that kept
/// their file name first; in the order of the added paths.
std::vector<Rename> ConfirmRenames(int live_fd, int upper_fd, const RenameCandidates& candidates);

}  // namespace sandboxd
