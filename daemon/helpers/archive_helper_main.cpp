// sandboxd-archive-helper: suspend's and resume's archiving (upper_archive.h) in a process of
// its own. libarchive and what it loads (libxml2, ICU, nettle, four compressors) then never
// enter the daemon, which stays small and quick to start for D-Bus activation; an archive is
// written or read in one go anyway, so a process per archive costs nothing that matters.
//
//   sandboxd-archive-helper write UPPER ARCHIVE LEVEL
//   sandboxd-archive-helper extract ARCHIVE UPPER
//
// Prints "ENTRIES BYTES" on success; the error's message on stderr and exit status 1 otherwise.
// Started by sandboxd as root, on its own directories only. When fd 3 is open (a pipe of
// sandboxd's), it gets a line "ENTRIES_DONE ENTRIES_TOTAL BYTES_DONE BYTES_TOTAL" at most every
// 100 ms while the work goes on (upper_archive.h ArchiveProgress); a line the pipe has no room
// for is dropped, never waited for.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "helpers/upper_archive.h"

namespace {

constexpr int kProgressFd = 3;

/// The progress lines on fd 3, at most one per 100 ms; none when fd 3 is not open.
sandboxd::ArchiveProgressSink ProgressLines() {
  if (fcntl(kProgressFd, F_GETFD) < 0) return {};
  fcntl(kProgressFd, F_SETFL, fcntl(kProgressFd, F_GETFL) | O_NONBLOCK);
  auto last = std::chrono::steady_clock::now();
  return [last](const sandboxd::ArchiveProgress& p) mutable {
    auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::milliseconds(100)) return;
    last = now;
    char line[128];
    int length = std::snprintf(line, sizeof line, "%llu %llu %llu %llu\n", static_cast<unsigned long long>(p.entries_done),
                               static_cast<unsigned long long>(p.entries_total), static_cast<unsigned long long>(p.bytes_done),
                               static_cast<unsigned long long>(p.bytes_total));
    if (write(kProgressFd, line, static_cast<size_t>(length)) < 0) {
      // EAGAIN (no room: the reader is behind) or EPIPE: this line is not needed.
    }
  };
}

}  // namespace

int main(int argc, char** argv) {
  try {
    sandboxd::ArchiveStats stats;
    if (argc == 5 && std::strcmp(argv[1], "write") == 0) {
      stats = sandboxd::WriteUpperArchive(argv[2], argv[3], std::stoi(argv[4]), ProgressLines());
    } else if (argc == 4 && std::strcmp(argv[1], "extract") == 0) {
      stats = sandboxd::ExtractUpperArchive(argv[2], argv[3], ProgressLines());
    } else {
      std::fprintf(stderr, "usage: sandboxd-archive-helper write UPPER ARCHIVE LEVEL | extract ARCHIVE UPPER (started by sandboxd only)\n");
      return 2;
    }
    std::printf("%llu %llu\n", static_cast<unsigned long long>(stats.entries), static_cast<unsigned long long>(stats.bytes));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
