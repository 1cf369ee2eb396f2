#pragma once
/// A time sandboxd gives (microseconds since the epoch) as people read it, in their own zone:
/// "2026-11-30 04:01:02". Every verb that shows a job's, commit's or review's time uses it.

#include <time.h>

#include <cstdint>
#include <string>

namespace sandboxctl {

inline std::string LocalTime(int64_t usec) {
  time_t seconds = static_cast<time_t>(usec / 1000000);
  tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

}  // namespace sandboxctl
