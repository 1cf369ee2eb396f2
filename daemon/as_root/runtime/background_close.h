#pragma once
/// Closes file descriptors on a thread of its own, for the few whose close makes the caller
/// wait on the kernel: the last close of an inotify instance waits for an SRCU grace period
/// (5-15 ms on a quiet two-core machine), and a job's end must not wait for it before its
/// caller hears the job ended. The descriptor is gone from the caller at once; the kernel
/// object goes a moment later. A thread runs only while there is something to close.
/// Thread-safe; whatever is queued at exit is closed then.

#include "unique_fd.h"

namespace sandboxd {

void CloseInBackground(UniqueFd fd);

/// Returns once everything queued before the call is closed and the closing thread has ended
/// (for tests, and for a caller that must know the kernel object is gone or that no other
/// thread runs).
void FlushBackgroundCloses();

}  // namespace sandboxd
