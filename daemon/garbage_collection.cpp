#include "garbage_collection.h"

#include <algorithm>
#include <set>

namespace sandboxd {

std::string DescribeSeconds(uint64_t seconds) {
  if (seconds != 0 && seconds % 86400 == 0) return std::to_string(seconds / 86400) + "d";
  if (seconds != 0 && seconds % 3600 == 0) return std::to_string(seconds / 3600) + "h";
  if (seconds != 0 && seconds % 60 == 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

std::vector<GcRemoval> ChooseGarbage(const std::vector<GcCandidate>& sandboxes, uint64_t cap_bytes, int64_t now_usec) {
  std::vector<GcRemoval> removals;
  std::set<std::string> removed;
  uint64_t total = 0;
  for (const auto& sandbox : sandboxes) total += sandbox.bytes;
  for (const auto& sandbox : sandboxes) {
    if (sandbox.ttl_sec == 0 || sandbox.running_jobs > 0) continue;
    int64_t idle_usec = now_usec - sandbox.last_used_usec;
    if (idle_usec < static_cast<int64_t>(sandbox.ttl_sec) * 1000000) continue;
    removals.push_back({sandbox.id, "expired: idle for " + DescribeSeconds(static_cast<uint64_t>(idle_usec / 1000000)) +
                                        ", its ttl is " + DescribeSeconds(sandbox.ttl_sec)});
    removed.insert(sandbox.id);
    total -= sandbox.bytes;
  }
  if (cap_bytes == 0 || total <= cap_bytes) return removals;
  std::vector<const GcCandidate*> suspended;
  for (const auto& sandbox : sandboxes)
    if (sandbox.suspended && sandbox.running_jobs == 0 && !removed.count(sandbox.id)) suspended.push_back(&sandbox);
  std::stable_sort(suspended.begin(), suspended.end(), [](const GcCandidate* a, const GcCandidate* b) {
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->created_usec < b->created_usec;
  });
  for (const auto* sandbox : suspended) {
    if (total <= cap_bytes) break;
    removals.push_back({sandbox->id, "the sandboxes together were over the storage cap of " + std::to_string(cap_bytes) +
                                         " bytes; it was the largest suspended one"});
    total -= sandbox->bytes;
  }
  return removals;
}

}  // namespace sandboxd
