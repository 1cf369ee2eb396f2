#include "base/file_clock.h"

#include <time.h>

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
  const int64_t tick = Ns(resolution);
  // Naps of a quarter tick woke up to a millisecond after the tick, which every job's start
  // waited out whenever its bwrap was ready before it. The coarse clock cannot move before the
  // fine one is a whole tick past what it reads now (it never runs ahead of it), so that long is
  // slept at once; after, it moves when the kernel's timekeeping next catches up, which lags
  // the fine clock by anything up to a tick (3 ms on this machine's virtual CPUs): short naps.
  constexpr int64_t kNapNs = 100000;
  for (int64_t coarse; (coarse = FileClockNowNs()) <= mark;) {
    const int64_t earliest_step = coarse + tick;
    if (FileClockFineNowNs() < earliest_step) {
      const struct timespec until{static_cast<time_t>(earliest_step / 1000000000), static_cast<long>(earliest_step % 1000000000)};
      clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, nullptr);
    } else {
      const struct timespec nap{0, kNapNs};
      nanosleep(&nap, nullptr);
    }
  }
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
