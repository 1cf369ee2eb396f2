#pragma once
/// A sandbox's upper layer as one tar.zst archive (libarchive), for suspend and resume: every
/// entry an upper can hold survives the round trip, so that the change set after a resume is
/// the one before the suspend: files, directories, symlinks, fifos, whiteouts (character
/// devices 0/0) and the overlay's attributes (trusted.overlay.*: opaque directories, origins,
/// redirects), user.* attributes, modes (setuid included), owners, times, and hard links. Runs
/// in sandboxd-archive-helper (archive_helper_main.cpp), on the daemon's own directories only,
/// with the sandbox owner's file-system identity, so that what it writes is charged to the
/// owner; an archive is written mode 0600.

#include <string>

#include "model/archive_progress.h"

namespace sandboxd {

/// Writes the contents of directory `upper` (not the directory itself) to a new file at
/// `archive_path` (refused if something is there), zstd level `level` (1..19), and syncs it.
/// Never follows a symlink. Throws Error naming the path: kQuotaExceeded when a write found
/// no room (ENOSPC, EDQUOT). With `progress`, the layer is counted first (a walk of its
/// metadata) so that the figures have totals.
ArchiveStats WriteUpperArchive(const std::string& upper, const std::string& archive_path, int level,
                               const ArchiveProgressSink& progress = {});

/// Restores an archive written by WriteUpperArchive into the empty directory `upper`. Entries
/// are checked first: an absolute name, a ".." component or a path through a symlink is
/// refused. Syncs what it wrote. Throws Error naming the entry: kQuotaExceeded when a write
/// found no room (ENOSPC, EDQUOT), kFailed otherwise.
ArchiveStats ExtractUpperArchive(const std::string& archive_path, const std::string& upper, const ArchiveProgressSink& progress = {});

}  // namespace sandboxd
