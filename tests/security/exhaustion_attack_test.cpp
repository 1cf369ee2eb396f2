// The exhaustion attacks of issue 18, as a local user would make them against the real daemon.
// 1. One thread per call: a Diff into a pipe nobody reads pinned a daemon thread and an owner
//    helper for ever, also after the caller exited (the reader, a `sleep` of the attacker's,
//    kept the pipe open): 40 such calls made 40 more daemon threads. What must hold: the daemon's
//    threads stay bounded whatever one user sends, another user's calls are still served, and
//    a reader that stopped reading ends the call after [Limits] StalledReaderTimeout=, which
//    frees its worker and helper for the user's next calls.

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "attack_tools.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// The daemon's threads now (/proc/PID/task).
int ThreadsOf(pid_t pid) {
  int count = 0;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!dir) return -1;
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') ++count;
  closedir(dir);
  return count;
}

class ExhaustionTest : public AliceSandboxTest {
 protected:
  void TearDown() override {
    EndStalledDiffs();
    if (configured_) {
      std::remove(World().ConfigPath().c_str());
      World().StopDaemon();
      EXPECT_TRUE(World().StartDaemon());
    }
    AliceSandboxTest::TearDown();
  }
  /// Restarts the daemon with `config` as its sandboxd.conf (until the test ends).
  void Configure(const std::string& config) {
    std::ofstream(World().ConfigPath()) << config;
    configured_ = true;
    World().StopDaemon();
    ASSERT_TRUE(World().StartDaemon());
  }
  /// `count` Diff calls of alice's, each into a pipe whose reader (a sleep) never reads, on a
  /// diff of some megabytes (far more than a pipe holds). `give_up`: the caller stops waiting
  /// for the reply (and exits) after that many seconds, the reader staying.
  void StallDiffs(int count, int give_up = 0) {
    if (!made_big_) Job("head -c 3000000 /dev/urandom | base64 > big.txt");
    made_big_ = true;
    std::string call = "DBUS_SYSTEM_BUS_ADDRESS='" + World().bus_address() + "' " +
                       (give_up > 0 ? "timeout " + std::to_string(give_up) + " " : std::string()) + MATRIX_FD_CALL_BIN +
                       " /org/sandboxd/Sandbox1/sandbox/" + id_ + " org.sandboxd.Sandbox1.Sandbox.Diff '@as []' '@FD@' | sleep 300";
    for (int i = 0; i < count; ++i) stallers_.push_back(SpawnAs(kAlice, {"/bin/sh", "-c", call}));
  }
  /// Kills the readers (the pipes close: the calls end) and reaps the callers.
  void EndStalledDiffs() {
    if (stallers_.empty()) return;
    for (pid_t pid : stallers_) kill(pid, SIGKILL);
    World().RunAs("root", {"pkill", "-KILL", "-u", kAlice, "-x", "sleep"});
    for (pid_t pid : stallers_) waitpid(pid, nullptr, 0);
    stallers_.clear();
  }

 private:
  std::vector<pid_t> stallers_;
  bool configured_ = false;
  bool made_big_ = false;
};

/// Seconds `call` takes.
template <typename F>
double SecondsOf(F&& call) {
  auto started = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

TEST_F(ExhaustionTest, CallsIntoAPipeNobodyReadsHoldABoundedNumberOfThreadsAndOtherUsersAreServed) {
  const pid_t daemon = World().daemon_pid();
  const int before = ThreadsOf(daemon);
  ASSERT_GT(before, 0);
  StallDiffs(40, /*give_up=*/3);
  std::this_thread::sleep_for(5s);
  const int during = ThreadsOf(daemon);
  std::fprintf(stderr, "daemon threads: %d before, %d during\n", before, during);
  EXPECT_LE(during, before + 20) << "40 calls into a pipe nobody reads took the daemon from " << before << " to " << during
                                 << " threads";
  // Another user is served meanwhile, and promptly.
  Result listed;
  EXPECT_LT(SecondsOf([&] { listed = World().Sandboxctl(kBob, {"list"}); }), 10.0) << "another user's call waited behind the attacker's";
  EXPECT_EQ(listed.status, 0) << listed.err;
}

// The same stalled readers with [Limits] StalledReaderTimeout=3s, still open: each call gives
// up after 3 s without progress, so the attacker's own later call is served too, and no owner
// helper is left waiting on the pipes.
TEST_F(ExhaustionTest, AReaderThatStopsReadingEndsTheCallAndFreesItsWorker) {
  ASSERT_NO_FATAL_FAILURE(Configure("[Limits]\nStalledReaderTimeout=3s\n"));
  StallDiffs(8);
  std::this_thread::sleep_for(2s);
  // Four of alice's calls run (stuck), four wait; her next one waits behind them, until the
  // stuck ones give up: 2 x 3 s, not for ever.
  Result listed;
  EXPECT_LT(SecondsOf([&] { listed = Ctl({"changes", id_}); }), 30.0);
  EXPECT_EQ(listed.status, 0) << listed.err;
  std::this_thread::sleep_for(4s);
  Result helpers = World().RunAs("root", {"sh", "-c", "pgrep -u " + std::string(kAlice) + " -f sandboxd-text-helper | wc -l"});
  EXPECT_EQ(helpers.out, "0\n") << "owner helpers still wait on pipes nobody reads";
}

// Past [Limits] MaxCallsInFlightPerUser= (4 here) a user's next call is refused at once with
// the limit named, and another user's is not.
TEST_F(ExhaustionTest, AUserPastMaxCallsInFlightPerUserIsRefusedAndAnotherIsServed) {
  ASSERT_NO_FATAL_FAILURE(Configure("[Limits]\nMaxCallsInFlightPerUser=4\n"));
  StallDiffs(4);
  std::this_thread::sleep_for(2s);
  Result refused = Ctl({"changes", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("MaxCallsInFlightPerUser=4"), std::string::npos) << refused.err;
  Result other = World().Sandboxctl(kBob, {"list"});
  EXPECT_EQ(other.status, 0) << other.err;
  // The readers gone, the calls end, and alice is served again.
  EndStalledDiffs();
  EXPECT_TRUE(WaitUntil([&] { return Ctl({"changes", id_}).status == 0; }, 20s));
}

}  // namespace
}  // namespace sandboxd::it
