#include "base/background_close.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

namespace sandboxd {
namespace {

class BackgroundCloser {
 public:
  static BackgroundCloser& Instance() {
    static BackgroundCloser closer;
    return closer;
  }

  void Close(UniqueFd fd) {
    if (!fd) return;
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(fd));
      ++queued_;
      if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
    }
    wake_.notify_all();
  }

  void Flush() {
    std::unique_lock lock(mutex_);
    const uint64_t target = queued_;
    done_.wait(lock, [&] { return closed_ >= target; });
  }

  ~BackgroundCloser() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  BackgroundCloser() = default;

  void Run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to close
      UniqueFd fd = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      fd.reset();
      lock.lock();
      ++closed_;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<UniqueFd> queue_;
  uint64_t queued_ = 0, closed_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

void CloseInBackground(UniqueFd fd) { BackgroundCloser::Instance().Close(std::move(fd)); }

void FlushBackgroundCloses() { BackgroundCloser::Instance().Flush(); }

}  // namespace sandboxd
