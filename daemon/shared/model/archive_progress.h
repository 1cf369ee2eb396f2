#pragma once
/// What the archive helper (sandboxd-archive-helper, upper_archive.h) tells the daemon of an
/// archive it writes or restores: the figures of one archive, and how far the work has come.
/// The daemon reads them from the helper's pipe (archive_helper.h); neither side needs the
/// other's code for it.

#include <cstdint>
#include <functional>

namespace sandboxd {

struct ArchiveStats {
  uint64_t entries = 0;
  uint64_t bytes = 0;  ///< of the archive file
};

/// How far the writing or the restoring of an archive has come: entries, and bytes (of the
/// files' content when writing, of the archive when restoring), each done of its total (0:
/// not known: a restore learns the number of entries only at the end).
struct ArchiveProgress {
  uint64_t entries_done = 0, entries_total = 0;
  uint64_t bytes_done = 0, bytes_total = 0;
};
/// Called after each entry.
using ArchiveProgressSink = std::function<void(const ArchiveProgress&)>;

}  // namespace sandboxd
