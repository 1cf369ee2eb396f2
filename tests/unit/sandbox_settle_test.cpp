// A job's end is taken in (scan, sights, count) after its caller has heard it ended; until then
// the sandbox is settling. What must hold: no exclusive operation (commit, undo, discard,
// suspend, destroy) starts and no reader of sights goes on before the settling is done, and
// jobs still start meanwhile.

#include "sandbox/sandbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "sandbox/layout.h"
#include "store/ordered_lookup.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;

class SandboxSettleTest : public ::testing::Test {
 protected:
  Layout layout_{"/nonexistent/state", "/nonexistent/run"};
  Sandbox sandbox_{{"00000000000000aa", "p", 1000, SandboxState::kActive, 0, {"/p"}}, layout_};
};

TEST_F(SandboxSettleTest, AnExclusiveOperationWaitsUntilTheEndOfAJobIsTakenIn) {
  int64_t started = sandbox_.gate().BeginJob();
  sandbox_.gate().EndJob(started, /*settle=*/true);
  EXPECT_EQ(sandbox_.running_jobs(), 0u);
  EXPECT_EQ(sandbox_.gate().jobs_in_progress(), 1u);
  std::atomic<bool> began{false}, read{false};
  std::thread commit([&] {
    ExclusiveOperation exclusive(sandbox_.gate(), "commit");
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
  int64_t next = sandbox_.gate().BeginJob();
  sandbox_.gate().EndJob(next);
  sandbox_.gate().SettleDone();
  commit.join();
  reader.join();
  EXPECT_TRUE(began);
  EXPECT_TRUE(read);
  EXPECT_EQ(sandbox_.gate().jobs_in_progress(), 0u);
}

TEST_F(SandboxSettleTest, AJobThatEndsWithoutSettlingHoldsNothing) {
  int64_t started = sandbox_.gate().BeginJob();
  sandbox_.gate().EndJob(started);
  EXPECT_EQ(sandbox_.gate().jobs_in_progress(), 0u);
  ExclusiveOperation exclusive(sandbox_.gate(), "commit");
}

// One settling at a time: the ends of jobs that end while it scans are taken in by one more
// pass of it, from the earliest of their starts, not by scans of their own piling up.
TEST_F(SandboxSettleTest, JobsEndingDuringASettlingAreTakenInByItsNextPass) {
  for (int i = 0; i < 3; ++i) sandbox_.gate().EndJob(sandbox_.gate().BeginJob(), /*settle=*/true);
  EXPECT_EQ(sandbox_.gate().jobs_in_progress(), 3u);
  ASSERT_TRUE(sandbox_.gate().QueueSettle(100));
  auto first = sandbox_.gate().NextSettlePass();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->unseen_from_ns, 100);
  EXPECT_EQ(first->jobs, 1u);
  EXPECT_FALSE(sandbox_.gate().QueueSettle(70)) << "a second settling started while one ran";
  EXPECT_FALSE(sandbox_.gate().QueueSettle(50));
  sandbox_.gate().SettlePassDone(*first);
  EXPECT_EQ(sandbox_.gate().jobs_in_progress(), 2u);
  auto second = sandbox_.gate().NextSettlePass();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->unseen_from_ns, 50);
  EXPECT_EQ(second->jobs, 2u);
  sandbox_.gate().SettlePassDone(*second);
  EXPECT_FALSE(sandbox_.gate().NextSettlePass());
  EXPECT_EQ(sandbox_.gate().jobs_in_progress(), 0u);
  // Once the last pass is over, the next end starts a settling again.
  EXPECT_TRUE(sandbox_.gate().QueueSettle(200));
}

/// A reader of sights up to `key` (a listing's page), on a thread of its own.
class Reader {
 public:
  Reader(const Sandbox& sandbox, RecordKey key)
      : thread_([this, &sandbox, key] {
          sandbox.WaitSettledThrough(key, "read the conflicts of");
          done_ = true;
        }) {}
  ~Reader() { thread_.join(); }
  bool done() const { return done_; }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// A listing reads a page's conflicts once the settling has stored the sights up to the page's
// last change, and no sooner: a page read before would take a change the job saw for one it
// did not, or miss one it did not see.
TEST_F(SandboxSettleTest, AReaderOfAPageGoesOnOnceThePassHasStoredPastIt) {
  sandbox_.gate().EndJob(sandbox_.gate().BeginJob(), /*settle=*/true);
  ASSERT_TRUE(sandbox_.gate().QueueSettle(100));
  auto pass = sandbox_.gate().NextSettlePass();
  ASSERT_TRUE(pass);
  Reader early(sandbox_, {0, "many/5"}), late(sandbox_, {1, "a"});
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(early.done()) << "a page was read before the settling stored any sight";
  sandbox_.gate().SettledThrough({0, "many/4"});
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(early.done()) << "a page was read before the settling stored its last change's sight";
  sandbox_.gate().SettledThrough({0, "many/5"});
  for (int i = 0; i < 100 && !early.done(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(early.done());
  EXPECT_FALSE(late.done()) << "a page of the next root was read before the settling reached it";
  sandbox_.gate().SettlePassDone(*pass);
  for (int i = 0; i < 100 && !late.done(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(late.done());
}

// A job that ends while a pass runs is taken in by the next pass, from the start of the change
// set: the pass under way having gone past a page says nothing of that job's changes there.
TEST_F(SandboxSettleTest, AJobEndingDuringAPassHoldsReadersUntilTheNextPassPassesThem) {
  sandbox_.gate().EndJob(sandbox_.gate().BeginJob(), /*settle=*/true);
  ASSERT_TRUE(sandbox_.gate().QueueSettle(100));
  auto first = sandbox_.gate().NextSettlePass();
  ASSERT_TRUE(first);
  sandbox_.gate().SettledThrough({0, "m"});
  sandbox_.gate().EndJob(sandbox_.gate().BeginJob(), /*settle=*/true);
  ASSERT_FALSE(sandbox_.gate().QueueSettle(200));
  Reader reader(sandbox_, {0, "c"});
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(reader.done()) << "a page was read on the word of a pass that does not cover the last job";
  sandbox_.gate().SettlePassDone(*first);
  auto second = sandbox_.gate().NextSettlePass();
  ASSERT_TRUE(second);
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(reader.done()) << "the next pass's word was taken before it stored anything";
  sandbox_.gate().SettledThrough({0, "d"});
  for (int i = 0; i < 100 && !reader.done(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(reader.done());
  sandbox_.gate().SettlePassDone(*second);
}

}  // namespace
}  // namespace sandboxd
