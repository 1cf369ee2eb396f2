#include "base/file_clock.h"

#include <time.h>

#include <algorithm>

namespace sandboxd {
namespace {

int64_t Ns(const struct timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; }

}  // namespace

int64_t FileClockNowNs() {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return Ns(now);
}

int64_t FileClockFineNowNs() {
  struct timespec fine;
  clock_gettime(CLOCK_REALTIME, &fine);
  return Ns(fine);
}

void WaitForFileClockPast(int64_t mark) {
  struct timespec resolution{0, 1000000};
  clock_getres(CLOCK_REALTIME_COARSE, &resolution);
  struct timespec nap{0, std::max<long>(resolution.tv_nsec / 4, 100000)};
  while (FileClockNowNs() <= mark) nanosleep(&nap, nullptr);
}

int64_t FileClockNextTickNs() {
  // File times are stamped from the coarse clock, or (a time someone has read since the last
  // change, on kernels with multigrain timestamps) from the fine one; the coarse clock lags the
  // fine one by up to a tick. So the mark is the first coarse time past the fine "now": every
  // change made before has a time before it (either clock), every one made after a time at or
  // after it (the coarse clock never goes back, the fine one is never behind it).
  const int64_t now = FileClockFineNowNs();
  WaitForFileClockPast(now);
  return FileClockNowNs();
}

}  // namespace sandboxd
