#include "runtime/file_clock.h"

#include <time.h>

#include <algorithm>

namespace sandboxd {

int64_t FileClockNowNs() {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return TimespecNs(now);
}

int64_t FileClockFineNowNs() {
  struct timespec fine;
  clock_gettime(CLOCK_REALTIME, &fine);
  return TimespecNs(fine);
}

void WaitForFileClockPast(int64_t mark) {
  struct timespec resolution{0, 1000000};
  clock_getres(CLOCK_REALTIME_COARSE, &resolution);
  const int64_t tick = TimespecNs(resolution);
  // Naps of a quarter tick woke up to a millisecond after the tick, which every job's start
  // waited out whenever its bwrap was ready before it. The coarse clock cannot move before the
  // fine one is a whole tick past what it reads now (it never runs ahead of it), so that long is
  // slept at once; after, it moves when the kernel's timekeeping next catches up, which lags
  // the fine clock by anything up to a tick (3 ms on this machine's virtual CPUs): short naps.
  constexpr int64_t kNapNs = 100000;
  for (int64_t coarse; (coarse = FileClockNowNs()) <= mark;) {
    // A wall clock stepped back past the mark would be waited for as long as the step (a job
    // that never starts): no tick can come before the mark then, and the wait ends.
    if (FileClockFineNowNs() + tick < mark) return;
    // Relative, never until an absolute time of the wall clock: one stepped back would make
    // that a sleep of as long as the step.
    const int64_t until_step = std::clamp<int64_t>(coarse + tick - FileClockFineNowNs(), kNapNs, tick);
    const struct timespec nap{0, static_cast<long>(until_step)};
    nanosleep(&nap, nullptr);
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
