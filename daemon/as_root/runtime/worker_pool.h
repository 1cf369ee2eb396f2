#pragma once
/// The threads that serve callers' requests: a fixed number, shared fairly between users. A
/// thread per call let any local user pin the daemon's threads (a diff into a pipe nobody reads
/// held one for ever; 40 such calls made 40 threads). Here each user (a key: the caller's uid)
/// has a queue of its own; a free worker takes the next task of the next user in turn (round
/// robin), and no user has more than `per_key_running` tasks running at once, so one user's
/// backlog, or calls of theirs that wait (a polkit prompt, a stalled reader), never keep
/// another user's calls from running. How many a user may have in flight is the caller's to
/// check against InFlight before posting (Service::AdmitCall: [Limits] MaxCallsInFlightPerUser=).

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace sandboxd {

struct WorkerPoolLimits {
  size_t workers = 16;         ///< threads
  size_t per_key_running = 4;  ///< tasks of one key running at once (at most `workers`)
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolLimits limits);
  /// Runs no task not started yet; waits for the running ones.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Queues `task` (any callable, move-only ones too: an sdbus::Result travels with its work)
  /// for `key`. Tasks must not throw.
  template <typename F>
  void Post(uid_t key, F&& task) {
    std::unique_lock lock(mutex_);
    if (stopping_) return;
    auto held = std::make_shared<std::decay_t<F>>(std::forward<F>(task));
    EnqueueLocked(key, [held] { (*held)(); });
  }

  /// Tasks of `key` queued or running.
  size_t InFlight(uid_t key) const;
  /// Tasks queued or running, all keys.
  size_t Busy() const;
  /// Waits until no task is queued or running, for at most `timeout`; true when none is.
  bool WaitIdle(std::chrono::milliseconds timeout);
  const WorkerPoolLimits& limits() const { return limits_; }

 private:
  struct Queue {
    std::deque<std::function<void()>> waiting;
    size_t running = 0;
  };

  void EnqueueLocked(uid_t key, std::function<void()> task);
  /// The next key, after the last one served, with a waiting task and room to run it.
  std::map<uid_t, Queue>::iterator NextRunnableLocked();
  void Work();

  WorkerPoolLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;   ///< a task may have become runnable, or stopping
  std::condition_variable idle_;   ///< a task ended
  std::map<uid_t, Queue> queues_;  ///< keys with tasks queued or running only
  uid_t last_served_ = 0;
  bool served_any_ = false;
  size_t busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sandboxd
