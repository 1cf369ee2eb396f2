#pragma once
/// The one line sandboxctl draws for a long operation's progress (the daemon's Progress
/// signal), fitted to the terminal's width:
///   commit: moving [##########          ]  52%  5,200/10,000 entries
///   suspend: archiving [####            ]  21%  2,100/10,000 entries, 12.0 MiB/57.2 MiB
/// A phase without totals shows its count alone ("commit: planning 3,000 entries").

#include <cstdint>
#include <string>

namespace sandboxctl {

struct ProgressReport {
  std::string operation, phase;
  uint64_t entries_done = 0, entries_total = 0;
  uint64_t bytes_done = 0, bytes_total = 0;
};

/// The line, at most `width` columns (no newline, no escape sequences).
std::string ProgressLine(const ProgressReport& report, size_t width);

/// 1234567 as "1,234,567".
std::string Grouped(uint64_t number);

}  // namespace sandboxctl
