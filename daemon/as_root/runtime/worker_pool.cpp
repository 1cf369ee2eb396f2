#include "runtime/worker_pool.h"

#include <malloc.h>

#include <algorithm>
#include <chrono>

namespace sandboxd {

WorkerPool::WorkerPool(WorkerPoolLimits limits) : limits_(limits) {
  limits_.workers = std::max<size_t>(limits_.workers, 1);
  limits_.per_key_running = std::clamp<size_t>(limits_.per_key_running, 1, limits_.workers);
  threads_.reserve(limits_.workers);
  for (size_t i = 0; i < limits_.workers; ++i) threads_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void WorkerPool::EnqueueLocked(uid_t key, std::function<void()> task) {
  queues_[key].waiting.push_back(std::move(task));
  ++busy_;
  wake_.notify_one();
}

size_t WorkerPool::InFlight(uid_t key) const {
  std::lock_guard lock(mutex_);
  auto it = queues_.find(key);
  return it == queues_.end() ? 0 : it->second.waiting.size() + it->second.running;
}

size_t WorkerPool::Busy() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

bool WorkerPool::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return busy_ == 0; });
}

std::map<uid_t, WorkerPool::Queue>::iterator WorkerPool::NextRunnableLocked() {
  if (queues_.empty()) return queues_.end();
  // Round robin: the first runnable key after the last one served, wrapping around.
  auto start = served_any_ ? queues_.upper_bound(last_served_) : queues_.begin();
  auto runnable = [this](const std::pair<const uid_t, Queue>& entry) {
    return !entry.second.waiting.empty() && entry.second.running < limits_.per_key_running;
  };
  auto found = std::find_if(start, queues_.end(), runnable);
  if (found != queues_.end()) return found;
  found = std::find_if(queues_.begin(), start, runnable);
  return found != start ? found : queues_.end();
}

void WorkerPool::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    auto next = queues_.end();
    wake_.wait(lock, [&] {
      next = NextRunnableLocked();
      return stopping_ || next != queues_.end();
    });
    if (stopping_) return;
    uid_t key = next->first;
    std::function<void()> task = std::move(next->second.waiting.front());
    next->second.waiting.pop_front();
    ++next->second.running;
    last_served_ = key;
    served_any_ = true;
    lock.unlock();
    task();
    task = nullptr;  // what it captured goes before the pool hears it ended
    lock.lock();
    Queue& queue = queues_[key];
    --queue.running;
    if (queue.waiting.empty() && queue.running == 0) queues_.erase(key);
    --busy_;
    idle_.notify_all();
    // This key may run another task now: this worker takes it (or any other) itself, as its
    // wait checks before it sleeps. Waking every idle worker here cost each job's end a dozen
    // context switches on a two-core machine, for nothing: one slot freed, one worker free.
    if (busy_ == 0) {
      // The pool has fallen idle: what the calls freed goes back to the system (glibc keeps
      // freed memory in its arenas otherwise; a million-change listing left ~60 MiB held).
      lock.unlock();
      malloc_trim(0);
      lock.lock();
    }
  }
}

}  // namespace sandboxd
