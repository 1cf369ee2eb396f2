#pragma once
/// The wall clock, where a decision depends on it (garbage collection's expiry): the system's in
/// sandboxd, one a test sets (so that a day of idleness takes no day).

#include <chrono>
#include <cstdint>

namespace sandboxd {

/// A second in the unit Clock counts in.
inline constexpr int64_t kSecondUsec = 1000000;

class Clock {
 public:
  virtual ~Clock() = default;
  /// Microseconds since the epoch.
  virtual int64_t NowUsec() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowUsec() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
};

/// One for the whole process.
inline const Clock& TheSystemClock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace sandboxd
