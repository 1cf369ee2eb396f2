#include "bus/bus_loop.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"

namespace sandboxd {
namespace {

std::atomic<BusLoop*> the_loop{nullptr};

}  // namespace

BusLoop::BusLoop()
    : wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!wake_fd_) throw Error(Code::kFailed, std::string("cannot make the bus loop's eventfd: ") + strerror(errno));
  the_loop.store(this);
}

BusLoop::~BusLoop() { the_loop.store(nullptr); }

void BusLoop::Run(sdbus::IConnection& connection) {
  while (!leave_.exchange(false)) {
    // Everything sd-bus can do now (read, dispatch, write what is queued), then sleep until
    // the socket wants us (for output too while any is queued), a timeout, or a wake.
    while (connection.processPendingRequest())
      if (leave_.exchange(false)) return;
    auto wanted = connection.getEventLoopPollData();
    pollfd fds[] = {{wanted.fd, static_cast<short>(wanted.events), 0}, {wake_fd_.get(), POLLIN, 0}};
    if (poll(fds, 2, wanted.getPollTimeout()) < 0 && errno != EINTR)
      throw Error(Code::kFailed, std::string("cannot wait on the bus: ") + strerror(errno));
    if (fds[1].revents & POLLIN) {
      uint64_t count;
      (void)!read(wake_fd_.get(), &count, sizeof count);
    }
  }
}

void BusLoop::Leave() {
  leave_ = true;
  Wake();
}

void BusLoop::Wake() {
  uint64_t one = 1;
  (void)!write(wake_fd_.get(), &one, sizeof one);
}

void WakeBusLoop() noexcept {
  if (BusLoop* loop = the_loop.load()) loop->Wake();
}

}  // namespace sandboxd
