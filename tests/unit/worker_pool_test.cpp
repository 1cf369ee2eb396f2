// The daemon's worker pool: bounded threads, round robin between users, a cap per user on
// tasks running, what it counts in flight, and move-only tasks.

#include "runtime/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sandboxd {
namespace {

using namespace std::chrono_literals;

/// A gate tasks wait at until it opens.
class Gate {
 public:
  void Wait() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool WaitForWaiting(int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 5s, [&] { return waiting_ >= count; });
  }
  int waiting() {
    std::lock_guard lock(mutex_);
    return waiting_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int waiting_ = 0;
};

TEST(WorkerPoolTest, OneUsersStuckCallsLeaveWorkersForAnother) {
  WorkerPool pool({.workers = 4, .per_key_running = 2});
  Gate stuck;
  // User 1000 sends 40 calls that never end until the gate opens (a pipe nobody reads).
  for (int i = 0; i < 40; ++i) pool.Post(1000, [&stuck] { stuck.Wait(); });
  ASSERT_TRUE(stuck.WaitForWaiting(2));
  // User 1001's call still runs, at once.
  std::atomic<bool> ran{false};
  pool.Post(1001, [&ran] { ran = true; });
  for (int i = 0; i < 500 && !ran; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(ran) << "one user's stuck calls starved another's";
  EXPECT_EQ(stuck.waiting(), 2) << "one user ran more calls at once than allowed";
  stuck.Open();
  EXPECT_TRUE(pool.WaitIdle(5s));
}

TEST(WorkerPoolTest, UsersAreServedInTurn) {
  WorkerPool pool({.workers = 1, .per_key_running = 1});
  Gate start;
  auto hold = [&start] { start.Wait(); };
  pool.Post(1, hold);  // keeps the one worker until all is queued
  ASSERT_TRUE(start.WaitForWaiting(1));
  std::mutex mutex;
  std::string order;
  for (uid_t key : {10u, 10u, 10u, 20u, 20u, 30u}) {
    auto note = [&, key] {
      std::lock_guard lock(mutex);
      order += std::to_string(key) + " ";
    };
    pool.Post(key, note);
  }
  start.Open();
  ASSERT_TRUE(pool.WaitIdle(5s));
  EXPECT_EQ(order, "10 20 30 10 20 10 ");
}

// What Service::AdmitCall holds a user to ([Limits] MaxCallsInFlightPerUser=): tasks queued
// and running, until they end, per user; move-only tasks run.
TEST(WorkerPoolTest, InFlightCountsAUsersQueuedAndRunningTasksUntilTheyEnd) {
  WorkerPool pool({.workers = 2, .per_key_running = 1});
  Gate gate;
  for (int i = 0; i < 3; ++i) pool.Post(1000, [&gate] { gate.Wait(); });
  ASSERT_TRUE(gate.WaitForWaiting(1));
  EXPECT_EQ(pool.InFlight(1000), 3u) << "one running, two queued";
  EXPECT_EQ(pool.InFlight(1001), 0u);
  std::atomic<bool> ran{false};
  auto owned = std::make_unique<int>(7);
  pool.Post(1001, [&ran, owned = std::move(owned)] { ran = *owned == 7; });
  gate.Open();
  ASSERT_TRUE(pool.WaitIdle(5s));
  EXPECT_TRUE(ran);
  EXPECT_EQ(pool.InFlight(1000), 0u);
  EXPECT_EQ(pool.Busy(), 0u);
}

TEST(WorkerPoolTest, ThreadsAreBoundedHoweverManyTasksWait) {
  std::atomic<int> running{0}, most{0};
  {
    WorkerPool pool({.workers = 3, .per_key_running = 3});
    for (int i = 0; i < 200; ++i) {
      auto task = [&] {
        int now = ++running;
        for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(100us);
        --running;
      };
      pool.Post(static_cast<uid_t>(i % 7), task);
    }
    ASSERT_TRUE(pool.WaitIdle(10s));
  }
  EXPECT_LE(most.load(), 3);
  EXPECT_GE(most.load(), 1);
}

}  // namespace
}  // namespace sandboxd
