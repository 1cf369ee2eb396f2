#pragma once
/// Which paths of a sandbox hold a change, as of its last settling (job_settling.h): what lets
/// a job's end count the change set by looking at the paths the job touched alone. Kept as a
/// 64-bit hash per {root, path} (a sorted array and two small deltas: 8 bytes a change, 1.6 MB
/// at 200,000), since it only counts: two paths of one sandbox sharing a hash (odds of about
/// one in 10^9 at 200,000 changes) would make the count one short until the next full scan;
/// what a path holds is always read from the layers.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace sandboxd {

class KnownChanges {
 public:
  static uint64_t Key(size_t root, std::string_view path);

  /// Starts again from a full scan: Add each change of it, in any order, then Seal.
  void Add(size_t root, std::string_view path);
  void Seal();

  /// After a look at one touched path: whether it holds a change now.
  void Set(size_t root, std::string_view path, bool changed);
  bool Contains(size_t root, std::string_view path) const;
  size_t size() const { return sorted_.size() + added_.size() - removed_.size(); }

 private:
  bool InSorted(uint64_t key) const;
  /// Folds the deltas into the array once they grow (each lookup stays a binary search and
  /// two hash probes).
  void Compact();

  static constexpr size_t kCompactAt = 4096;
  std::vector<uint64_t> sorted_;
  std::unordered_set<uint64_t> added_;    ///< not in sorted_
  std::unordered_set<uint64_t> removed_;  ///< in sorted_
};

}  // namespace sandboxd
