#pragma once
/// What the daemon tells its service manager about itself: the STATUS= line systemctl status
/// shows ("3 sandboxes, 1 job running"), and when it has been idle long enough to exit under
/// --idle-exit.

#include <cstdint>
#include <string>

namespace sandboxd {

std::string StatusLine(size_t sandboxes, unsigned running_jobs);

/// What keeps the daemon from being idle.
struct Activity {
  unsigned running_jobs = 0;
  unsigned operations = 0;        ///< calls being worked on (commits, polkit prompts, suspends)
  int64_t last_call_usec = 0;     ///< the last method call the daemon received (CLOCK_MONOTONIC)
};

/// True when nothing runs and no call came for `idle_seconds` (never when idle_seconds is 0).
bool IdleLongEnough(const Activity& activity, int64_t now_usec, unsigned idle_seconds);

}  // namespace sandboxd
