#pragma once
/// The daemon's D-Bus event loop, in place of sdbus-c++'s enterEventLoop. Why our own: in
/// sdbus-c++ 1.2 (fixed upstream in 1.3), a message sent from another thread that does not fit
/// the socket at once (over the 16 MiB sd-bus's send buffer takes) waits in sd-bus's queue
/// until the loop wakes for something else, because the loop polled for input only: a large
/// reply from a worker could wait for minutes on an idle bus. Every thread that sends calls
/// WakeBusLoop() after it, and the loop polls again with what sd-bus wants now (output too).

#include <sdbus-c++/IConnection.h>

#include <atomic>

#include "unique_fd.h"

namespace sandboxd {

class BusLoop {
 public:
  /// One loop per process (WakeBusLoop reaches it).
  BusLoop();
  ~BusLoop();
  BusLoop(const BusLoop&) = delete;
  BusLoop& operator=(const BusLoop&) = delete;

  /// Dispatches `connection` until Leave() (one that came before returns at once). Throws what
  /// sd-bus throws (a lost connection).
  void Run(sdbus::IConnection& connection);
  /// Makes Run return soon; any thread, also before Run.
  void Leave();
  /// Makes Run look at the bus again (new output queued); any thread.
  void Wake();

 private:
  UniqueFd wake_fd_;  ///< an eventfd
  std::atomic<bool> leave_{false};
};

/// Wakes the process's bus loop, if one runs: call after sending on the bus from a thread
/// other than the loop's (replies from workers, signals). Never throws.
void WakeBusLoop() noexcept;

}  // namespace sandboxd
