#include "base/stalled_writer.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "base/errors.h"

namespace sandboxd {

bool WriteWithin(int fd, std::string_view text, int64_t stall_ms, const std::string& what) {
  size_t done = 0;
  while (done < text.size()) {
    size_t piece = text.size() - done;
    if (stall_ms > 0) {
      pollfd ready{fd, POLLOUT, 0};
      int polled = poll(&ready, 1, static_cast<int>(std::min<int64_t>(stall_ms, INT32_MAX)));
      if (polled < 0 && errno == EINTR) continue;
      if (polled < 0) ThrowErrno("cannot wait to write " + what);
      if (polled == 0)
        throw Error(Code::kFailed, "the reader of " + what + " took nothing for " + std::to_string(stall_ms / 1000) +
                                       " s ([Limits] StalledReaderTimeout=); gave up");
      if (ready.revents & (POLLERR | POLLHUP)) return false;
      piece = std::min<size_t>(piece, PIPE_BUF);
    }
    ssize_t put = write(fd, text.data() + done, piece);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) {
      if (errno == EPIPE) return false;
      ThrowErrno("cannot write " + what);
    }
    done += static_cast<size_t>(put);
  }
  return true;
}

bool ReaderWentAway(int fd) {
  pollfd poller{fd, POLLOUT, 0};
  if (poll(&poller, 1, 0) != 1) return false;
  return (poller.revents & (POLLERR | POLLHUP)) != 0;
}

}  // namespace sandboxd
