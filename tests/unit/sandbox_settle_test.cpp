// A job's end is taken in (scan, sights, count) after its caller has heard it ended; until then
// the sandbox is settling. What must hold: no exclusive operation (commit, undo, discard,
// suspend, destroy) starts and no reader of sights goes on before the settling is done, and
// jobs still start meanwhile.

#include "sandbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "layout.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;

class SandboxSettleTest : public ::testing::Test {
 protected:
  Layout layout_{"/nonexistent/state", "/nonexistent/run"};
  Sandbox sandbox_{{"00000000000000aa", "p", 1000, "active", 0, {"/p"}}, layout_};
};

TEST_F(SandboxSettleTest, AnExclusiveOperationWaitsUntilTheEndOfAJobIsTakenIn) {
  int64_t started = sandbox_.BeginJob();
  sandbox_.EndJob(started, /*settle=*/true);
  EXPECT_EQ(sandbox_.running_jobs(), 0u);
  EXPECT_EQ(sandbox_.jobs_in_progress(), 1u);
  std::atomic<bool> began{false}, read{false};
  std::thread commit([&] {
    ExclusiveOperation exclusive(sandbox_, "commit");
    began = true;
  });
  std::thread reader([&] {
    sandbox_.WaitSettled("read the conflicts of");
    read = true;
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(began) << "a commit began while the job's end was still being taken in";
  EXPECT_FALSE(read);
  // A job may start meanwhile (jobs run together; only exclusive operations wait).
  int64_t next = sandbox_.BeginJob();
  sandbox_.EndJob(next);
  sandbox_.SettleDone();
  commit.join();
  reader.join();
  EXPECT_TRUE(began);
  EXPECT_TRUE(read);
  EXPECT_EQ(sandbox_.jobs_in_progress(), 0u);
}

TEST_F(SandboxSettleTest, AJobThatEndsWithoutSettlingHoldsNothing) {
  int64_t started = sandbox_.BeginJob();
  sandbox_.EndJob(started);
  EXPECT_EQ(sandbox_.jobs_in_progress(), 0u);
  ExclusiveOperation exclusive(sandbox_, "commit");
}

// One settling at a time: the ends of jobs that end while it scans are taken in by one more
// pass of it, from the earliest of their starts, not by scans of their own piling up.
TEST_F(SandboxSettleTest, JobsEndingDuringASettlingAreTakenInByItsNextPass) {
  for (int i = 0; i < 3; ++i) sandbox_.EndJob(sandbox_.BeginJob(), /*settle=*/true);
  EXPECT_EQ(sandbox_.jobs_in_progress(), 3u);
  ASSERT_TRUE(sandbox_.QueueSettle(100));
  auto first = sandbox_.NextSettlePass();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->unseen_from_ns, 100);
  EXPECT_EQ(first->jobs, 1u);
  EXPECT_FALSE(sandbox_.QueueSettle(70)) << "a second settling started while one ran";
  EXPECT_FALSE(sandbox_.QueueSettle(50));
  sandbox_.SettleDone(first->jobs);
  EXPECT_EQ(sandbox_.jobs_in_progress(), 2u);
  auto second = sandbox_.NextSettlePass();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->unseen_from_ns, 50);
  EXPECT_EQ(second->jobs, 2u);
  sandbox_.SettleDone(second->jobs);
  EXPECT_FALSE(sandbox_.NextSettlePass());
  EXPECT_EQ(sandbox_.jobs_in_progress(), 0u);
  // Once the last pass is over, the next end starts a settling again.
  EXPECT_TRUE(sandbox_.QueueSettle(200));
}

}  // namespace
}  // namespace sandboxd
