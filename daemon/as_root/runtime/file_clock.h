#pragma once
/// The clock the kernel stamps file times with (the coarse one, one tick every few ms): when
/// sandboxd asks whether a live entry changed after a moment, the moment must be read from it,
/// and taken on a tick boundary so that an entry changed in the same tick cannot be on the
/// wrong side of it.

#include <cstdint>
#include <ctime>

namespace sandboxd {

/// A file time (st_ctim and the like) in nanoseconds since the epoch.
inline int64_t TimespecNs(const timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; }

/// Now, read from the clock file times are stamped with (the coarse one): an entry changed from
/// now on has a ctime at or after it.
int64_t FileClockNowNs();

/// The first tick of the file clock past now, waited for (up to two ticks: 8 ms with HZ=250).
/// Every change made before it has a ctime before it, every one made after a ctime at or after
/// it. Jobs start there (an edit just before a job is not taken for one made during it), and
/// commits and undos end there (an edit just after one is not taken for one made before it):
/// compare with `>=`.
int64_t FileClockNextTickNs();

/// Now, read from the fine clock: no entry changed before it has a ctime after it (whichever
/// clock stamped it). A job's start mark: taken without waiting, it is made a boundary by
/// WaitForFileClockPast before the job's command may run (job.h), so every change the job
/// makes has a ctime after it; a live edit made while bwrap sets up, before the command could
/// read anything, may fall either side, and either side is right for it.
int64_t FileClockFineNowNs();

/// Returns once the file clock (the coarse one) is past `mark`: at once when it is already,
/// else within two ticks (4 ms each with HZ=250; the coarse clock may step up to a tick behind
/// the fine one). At once too when `mark` is ahead of the fine clock by more than a tick (the
/// wall clock was stepped back since): no tick could reach it before the clock catches up.
void WaitForFileClockPast(int64_t mark);

}  // namespace sandboxd
