#include "pipe_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace sandboxd_review {

PipeReader::PipeReader(std::function<void(std::string_view)> on_data, std::function<void(const std::string& error)> on_end)
    : on_data_(std::move(on_data)), on_end_(std::move(on_end)) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  read_end_.reset(ends[0]);
  write_end_.reset(ends[1]);
  // Non-blocking, so that a read never waits for the daemon inside the main loop.
  fcntl(read_end_.get(), F_SETFL, fcntl(read_end_.get(), F_GETFL) | O_NONBLOCK);
  watch_ = Glib::signal_io().connect(sigc::mem_fun(*this, &PipeReader::OnReadable), read_end_.get(),
                                     Glib::IOCondition::IO_IN | Glib::IOCondition::IO_HUP | Glib::IOCondition::IO_ERR);
}

PipeReader::~PipeReader() {
  *alive_ = false;
  watch_.disconnect();
}

sdbus::UnixFd PipeReader::TakeWriteEnd() { return sdbus::UnixFd(write_end_.release(), sdbus::adopt_fd); }

bool PipeReader::OnReadable(Glib::IOCondition) {
  // A turn reads at most 256 KiB (some 2,000 changes of a listing), so that a fast writer
  // cannot keep the window from drawing and answering for long.
  char buffer[64 * 1024];
  for (int turn = 0; turn < 4; ++turn) {
    ssize_t n = read(read_end_.get(), buffer, sizeof buffer);
    if (n > 0) {
      std::shared_ptr<bool> alive = alive_;
      on_data_(std::string_view(buffer, static_cast<size_t>(n)));
      if (!*alive) return false;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    std::string error = n < 0 ? std::string("cannot read the daemon's answer: ") + std::strerror(errno) : "";
    read_end_.reset();
    // on_end_ may destroy this reader: nothing of it is touched after the call.
    auto on_end = std::move(on_end_);
    on_end(error);
    return false;
  }
  return true;
}

}  // namespace sandboxd_review
