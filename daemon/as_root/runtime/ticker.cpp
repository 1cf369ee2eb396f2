#include "runtime/ticker.h"

namespace sandboxd {

void Ticker::Start(std::chrono::milliseconds period, std::function<void()> tick) {
  thread_ = std::thread([this, period, tick = std::move(tick)] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, period, [this] { return stopping_; })) {
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

void Ticker::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace sandboxd
