// sandboxd-archive-helper: suspend's and resume's archiving (upper_archive.h) in a process of
// its own. libarchive and what it loads (libxml2, ICU, nettle, four compressors) then never
// enter the daemon, which stays small and quick to start for D-Bus activation; an archive is
// written or read in one go anyway, so a process per archive costs nothing that matters.
//
//   sandboxd-archive-helper write UPPER ARCHIVE LEVEL
//   sandboxd-archive-helper extract ARCHIVE UPPER
//
// Prints "ENTRIES BYTES" on success; the error's message on stderr and exit status 1 otherwise.
// Started by sandboxd as root, on its own directories only.

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "helpers/upper_archive.h"

int main(int argc, char** argv) {
  try {
    sandboxd::ArchiveStats stats;
    if (argc == 5 && std::strcmp(argv[1], "write") == 0) {
      stats = sandboxd::WriteUpperArchive(argv[2], argv[3], std::stoi(argv[4]));
    } else if (argc == 4 && std::strcmp(argv[1], "extract") == 0) {
      stats = sandboxd::ExtractUpperArchive(argv[2], argv[3]);
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
