#include "jobs/known_changes.h"

#include <algorithm>
#include <functional>
#include <string>

namespace sandboxd {

uint64_t KnownChanges::Key(size_t root, std::string_view path) {
  // The root mixed in with an odd multiplier: the same path under two roots differs.
  return std::hash<std::string_view>{}(path) ^ (uint64_t{root} * 0x9E3779B97F4A7C15ULL + 0x7F4A7C15ULL);
}

void KnownChanges::Add(size_t root, std::string_view path) { sorted_.push_back(Key(root, path)); }

void KnownChanges::Seal() {
  std::sort(sorted_.begin(), sorted_.end());
  sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
  sorted_.shrink_to_fit();
  added_.clear();
  removed_.clear();
}

bool KnownChanges::InSorted(uint64_t key) const { return std::binary_search(sorted_.begin(), sorted_.end(), key); }

bool KnownChanges::Contains(size_t root, std::string_view path) const {
  uint64_t key = Key(root, path);
  return added_.count(key) || (InSorted(key) && !removed_.count(key));
}

void KnownChanges::Set(size_t root, std::string_view path, bool changed) {
  uint64_t key = Key(root, path);
  bool sorted = InSorted(key);
  if (changed) {
    if (sorted)
      removed_.erase(key);
    else
      added_.insert(key);
  } else {
    if (sorted)
      removed_.insert(key);
    else
      added_.erase(key);
  }
  if (added_.size() + removed_.size() >= kCompactAt) Compact();
}

void KnownChanges::Compact() {
  std::vector<uint64_t> merged;
  merged.reserve(size());
  std::vector<uint64_t> added(added_.begin(), added_.end());
  std::sort(added.begin(), added.end());
  auto kept = [&](uint64_t key) { return !removed_.count(key); };
  auto a = added.begin();
  for (uint64_t key : sorted_) {
    if (!kept(key)) continue;
    for (; a != added.end() && *a < key; ++a) merged.push_back(*a);
    merged.push_back(key);
  }
  merged.insert(merged.end(), a, added.end());
  sorted_ = std::move(merged);
  added_.clear();
  removed_.clear();
}

}  // namespace sandboxd
