#pragma once
/// A thread that runs one piece of housekeeping at a fixed period until it is stopped: garbage
/// collection and the heartbeat (status, watchdog, idle exit) each have one. Stopping wakes it
/// at once rather than after the rest of a period.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace sandboxd {

class Ticker {
 public:
  Ticker() = default;
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;
  ~Ticker() { Stop(); }

  /// Runs `tick` every `period` (first after one period) on a thread of its own. `tick` must
  /// not throw and must not call Stop().
  void Start(std::chrono::milliseconds period, std::function<void()> tick);
  /// Ends the thread after the tick in progress, if any; waits for it.
  void Stop();

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sandboxd
