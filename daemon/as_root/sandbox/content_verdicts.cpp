#include "sandbox/content_verdicts.h"

#include <functional>

namespace sandboxd {

ContentVerdicts::Identity ContentVerdicts::IdentityOf(const struct stat& st) {
  auto ns = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; };
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size), ns(st.st_mtim),
          ns(st.st_ctim)};
}

size_t ContentVerdicts::KeyHash::operator()(const Key& key) const {
  size_t hash = 0;
  for (uint64_t part : {key.lower.dev, key.lower.ino, key.lower.size, static_cast<uint64_t>(key.lower.mtime_ns),
                        static_cast<uint64_t>(key.lower.ctime_ns), key.upper.dev, key.upper.ino, key.upper.size,
                        static_cast<uint64_t>(key.upper.mtime_ns), static_cast<uint64_t>(key.upper.ctime_ns)})
    hash = hash * 1000003 ^ std::hash<uint64_t>{}(part);
  return hash;
}

std::optional<bool> ContentVerdicts::Find(const struct stat& lower, const struct stat& upper) const {
  std::lock_guard lock(mutex_);
  auto it = verdicts_.find({IdentityOf(lower), IdentityOf(upper)});
  if (it == verdicts_.end()) return std::nullopt;
  return it->second;
}

void ContentVerdicts::Remember(const struct stat& lower, const struct stat& upper, bool differs) {
  std::lock_guard lock(mutex_);
  if (verdicts_.size() >= capacity_) verdicts_.clear();  // verdicts of files long rewritten, mostly
  verdicts_[{IdentityOf(lower), IdentityOf(upper)}] = differs;
}

size_t ContentVerdicts::size() const {
  std::lock_guard lock(mutex_);
  return verdicts_.size();
}

}  // namespace sandboxd
