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

}  // namespace
}  // namespace sandboxd
