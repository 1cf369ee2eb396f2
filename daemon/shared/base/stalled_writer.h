#pragma once
/// Writing into an fd a caller handed over (a diff, a change list): the reader is the caller's,
/// so it may stop reading, and a writer must not wait for it for ever.

#include <cstdint>
#include <string>
#include <string_view>

namespace sandboxd {

/// Writes `text` whole to `fd`; false when the reader went away (EPIPE, a hung-up pipe). With
/// `stall_ms` > 0, each piece waits for room (poll) at most that long and is at most PIPE_BUF
/// bytes, which a pipe or socket with room takes whole without blocking: a reader that takes
/// nothing for `stall_ms` ends the write with Error(kFailed) naming `what` and [Limits]
/// StalledReaderTimeout=. Other errors throw Error(kFailed) naming `what`.
bool WriteWithin(int fd, std::string_view text, int64_t stall_ms, const std::string& what);

/// Whether the reader of pipe or socket `fd` is gone (its end closed): what is written next
/// would fail with EPIPE. False for a file, which has no reader to lose.
bool ReaderWentAway(int fd);

}  // namespace sandboxd
