#include "runtime/background_close.h"

#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

namespace sandboxd {
namespace {

/// One thread at a time, and only while there is something to close: a thread that stayed
/// would take part in every process-wide change of credentials (glibc's setresuid signals every
/// thread), which a process running with per-thread identities (the unit tests' RunAsNobody)
/// cannot always give it.
class BackgroundCloser {
 public:
  static BackgroundCloser& Instance() {
    // Never destroyed: a thread still closing at exit ends with the process, whose exit closes
    // whatever is queued.
    static BackgroundCloser* closer = new BackgroundCloser;
    return *closer;
  }

  void Close(UniqueFd fd) {
    if (!fd) return;
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(fd));
    ++queued_;
    if (running_) return;  // the thread at work takes it
    JoinFinished();
    running_ = pthread_create(&thread_, nullptr, &BackgroundCloser::Start, this) == 0;
    joinable_ = running_;
    if (!running_) CloseQueuedHere();  // no thread to be had: at once, then
  }

  void Flush() {
    std::unique_lock lock(mutex_);
    const uint64_t target = queued_;
    done_.wait(lock, [&] { return closed_ >= target && !running_; });
    JoinFinished();
  }

 private:
  BackgroundCloser() = default;

  static void* Start(void* self) {
    static_cast<BackgroundCloser*>(self)->Run();
    return nullptr;
  }

  void Run() {
    std::unique_lock lock(mutex_);
    while (!queue_.empty()) {
      UniqueFd fd = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      fd.reset();
      lock.lock();
      ++closed_;
    }
    running_ = false;
    done_.notify_all();
  }

  /// Reaps the last thread, which has ended its work (running_ is false); under mutex_.
  void JoinFinished() {
    if (!joinable_) return;
    pthread_join(thread_, nullptr);
    joinable_ = false;
  }

  void CloseQueuedHere() {
    for (; !queue_.empty(); queue_.pop_front(), ++closed_) queue_.front().reset();
    done_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable done_;
  std::deque<UniqueFd> queue_;
  uint64_t queued_ = 0, closed_ = 0;
  bool running_ = false;   ///< a thread is closing what is queued
  bool joinable_ = false;  ///< thread_ has not been joined
  pthread_t thread_{};
};

}  // namespace

void CloseInBackground(UniqueFd fd) { BackgroundCloser::Instance().Close(std::move(fd)); }

void FlushBackgroundCloses() { BackgroundCloser::Instance().Flush(); }

}  // namespace sandboxd
