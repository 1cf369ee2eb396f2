#pragma once
/// Which sandboxes garbage collection removes, decided from facts alone (no files, no D-Bus), so
/// that the order is tested exactly: first every expired one (idle longer than its --ttl), then,
/// while the storage of all sandboxes together is over the daemon's cap, the largest suspended
/// ones of the users over their share of it (the cap split evenly between the users who have
/// sandboxes), the oldest first among equals: one user filling the store cannot make another
/// user's sandboxes go. A sandbox with a job running is never collected, nor is an active one
/// for the cap: only suspended sandboxes are given up for space.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sandboxd {

struct GcCandidate {
  std::string id;
  bool suspended = false;
  unsigned running_jobs = 0;
  int64_t created_usec = 0;
  int64_t last_used_usec = 0;  ///< the end of its last job or operation (or its creation)
  uint64_t ttl_sec = 0;        ///< 0: never expires
  uint64_t bytes = 0;          ///< all it keeps on disk (usage.h)
  uid_t owner = 0;
};

struct GcRemoval {
  std::string id;
  std::string why;  ///< "expired: idle 3h, ttl 1h" or "over the storage cap ..."
  bool operator==(const GcRemoval&) const = default;
};

/// `cap_bytes` 0: no cap. `now_usec`: the time to judge idleness by.
std::vector<GcRemoval> ChooseGarbage(const std::vector<GcCandidate>& sandboxes, uint64_t cap_bytes, int64_t now_usec);

/// "90s", "5m", "3h", "2d": the largest unit that divides `seconds`, for messages.
std::string DescribeSeconds(uint64_t seconds);

}  // namespace sandboxd
