#include "lifecycle/garbage_collection.h"

#include <algorithm>
#include <map>
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
  const uint64_t total_before = total;
  std::map<uid_t, uint64_t> held;
  for (const auto& sandbox : sandboxes)
    if (!removed.count(sandbox.id)) held[sandbox.owner] += sandbox.bytes;
  const uint64_t share = cap_bytes / held.size();
  const std::map<uid_t, uint64_t> held_before = held;
  std::vector<const GcCandidate*> suspended;
  for (const auto& sandbox : sandboxes)
    if (sandbox.suspended && sandbox.running_jobs == 0 && !removed.count(sandbox.id) && held[sandbox.owner] > share)
      suspended.push_back(&sandbox);
  std::stable_sort(suspended.begin(), suspended.end(), [](const GcCandidate* a, const GcCandidate* b) {
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->created_usec < b->created_usec;
  });
  for (const auto* sandbox : suspended) {
    if (total <= cap_bytes) break;
    if (held[sandbox->owner] <= share) continue;  // within its share now
    removals.push_back({sandbox->id, "the sandboxes together (" + std::to_string(total_before) + " bytes) were over the storage cap of " +
                                         std::to_string(cap_bytes) + " bytes, and uid " + std::to_string(sandbox->owner) + " held " +
                                         std::to_string(held_before.at(sandbox->owner)) + " bytes, over its share of " +
                                         std::to_string(share) + " bytes (the cap split between " + std::to_string(held.size()) +
                                         " users); it was that user's largest suspended sandbox"});
    total -= sandbox->bytes;
    held[sandbox->owner] -= sandbox->bytes;
  }
  return removals;
}

}  // namespace sandboxd
