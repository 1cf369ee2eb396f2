#pragma once
/// Whether a live file and its copy in a sandbox's upper layer hold the same bytes, remembered
/// by both sides' identity (device, inode, size, mtime, ctime). Every write to either file moves
/// its ctime, and nothing sets a ctime back but the clock, so a verdict found for the same two
/// identities still holds: a scan after the first reads only the files that changed since (an
/// edited 1 GiB file of the same size was read whole at every scan, after every job).

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace sandboxd {

class ContentVerdicts {
 public:
  /// Keeps at most `capacity` verdicts (~100 bytes each); past that it starts afresh.
  explicit ContentVerdicts(size_t capacity = 65536) : capacity_(capacity) {}
  ContentVerdicts(const ContentVerdicts&) = delete;
  ContentVerdicts& operator=(const ContentVerdicts&) = delete;

  /// Whether the files differ, if known for exactly these identities.
  std::optional<bool> Find(const struct stat& lower, const struct stat& upper) const;
  void Remember(const struct stat& lower, const struct stat& upper, bool differs);
  size_t size() const;

 private:
  struct Identity {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    bool operator==(const Identity&) const = default;
  };
  struct Key {
    Identity lower, upper;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  static Identity IdentityOf(const struct stat& st);

  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, bool, KeyHash> verdicts_;
};

}  // namespace sandboxd
