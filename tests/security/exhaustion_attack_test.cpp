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

using ExhaustionTest = AliceSandboxTest;

TEST_F(ExhaustionTest, CallsIntoAPipeNobodyReadsHoldABoundedNumberOfThreadsAndOtherUsersAreServed) {
  // A diff of some megabytes: far more than a pipe holds.
  Job("head -c 3000000 /dev/urandom | base64 > big.txt");
  const pid_t daemon = World().daemon_pid();
  const int before = ThreadsOf(daemon);
  ASSERT_GT(before, 0);
  // 40 calls, each writing into a pipe whose reader (a sleep) never reads; the caller itself
  // gives up waiting for the reply (and exits) after a few seconds.
  std::string call = "DBUS_SYSTEM_BUS_ADDRESS='" + World().bus_address() + "' timeout 3 " + std::string(MATRIX_FD_CALL_BIN) + " /org/sandboxd/Sandbox1/sandbox/" + id_ +
                     " org.sandboxd.Sandbox1.Sandbox.Diff '@as []' '@FD@' | sleep 300";
  std::vector<pid_t> attackers;
  for (int i = 0; i < 40; ++i) attackers.push_back(SpawnAs(kAlice, {"/bin/sh", "-c", call}));
  std::this_thread::sleep_for(5s);
  const int during = ThreadsOf(daemon);
  std::fprintf(stderr, "daemon threads: %d before, %d during\n", before, during);
  // Another user is served meanwhile, and promptly.
  auto started = std::chrono::steady_clock::now();
  Result listed = World().Sandboxctl(kBob, {"list"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_LT(seconds, 10.0) << "another user's call waited behind the attacker's";
  EXPECT_LE(during, before + 20) << "40 calls into a pipe nobody reads took the daemon from " << before << " to " << during
                                 << " threads";
  for (pid_t pid : attackers) kill(pid, SIGKILL);
  World().RunAs("root", {"pkill", "-KILL", "-u", kAlice, "-x", "sleep"});
  for (pid_t pid : attackers) waitpid(pid, nullptr, 0);
}

// The same stalled readers with [Limits] StalledReaderTimeout=3s, still open: each call gives
// up after 3 s without progress, so the attacker's own later call is served too, and no owner
// helper is left waiting on the pipes.
TEST_F(ExhaustionTest, AReaderThatStopsReadingEndsTheCallAndFreesItsWorker) {
  Harness& w = World();
  std::ofstream(w.ConfigPath()) << "[Limits]\nStalledReaderTimeout=3s\n";
  w.StopDaemon();
  ASSERT_TRUE(w.StartDaemon());
  Job("head -c 3000000 /dev/urandom | base64 > big.txt");
  std::string call = "DBUS_SYSTEM_BUS_ADDRESS='" + w.bus_address() + "' " + std::string(MATRIX_FD_CALL_BIN) +
                     " /org/sandboxd/Sandbox1/sandbox/" + id_ + " org.sandboxd.Sandbox1.Sandbox.Diff '@as []' '@FD@' | sleep 300";
  std::vector<pid_t> attackers;
  for (int i = 0; i < 8; ++i) attackers.push_back(SpawnAs(kAlice, {"/bin/sh", "-c", call}));
  std::this_thread::sleep_for(2s);
  // Four of alice's calls run (stuck), four wait; her next one waits behind them, until the
  // stuck ones give up: 2 x 3 s, not for ever.
  auto started = std::chrono::steady_clock::now();
  Result listed = Ctl({"changes", id_});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(listed.status, 0) << listed.err;
  EXPECT_LT(seconds, 30.0);
  std::this_thread::sleep_for(4s);
  Result helpers = w.RunAs("root", {"sh", "-c", "pgrep -u " + std::string(kAlice) + " -f sandboxd-text-helper | wc -l"});
  EXPECT_EQ(helpers.out, "0\n") << "owner helpers still wait on pipes nobody reads";
  World().RunAs("root", {"pkill", "-KILL", "-u", kAlice, "-x", "sleep"});
  for (pid_t pid : attackers) waitpid(pid, nullptr, 0);
  std::remove(w.ConfigPath().c_str());
  w.StopDaemon();
  ASSERT_TRUE(w.StartDaemon());
}

// Past [Limits] MaxCallsInFlightPerUser= (4 here) a user's next call is refused at once with
// the limit named, and another user's is not.
TEST_F(ExhaustionTest, AUserPastMaxCallsInFlightPerUserIsRefusedAndAnotherIsServed) {
  Harness& w = World();
  std::ofstream(w.ConfigPath()) << "[Limits]\nMaxCallsInFlightPerUser=4\n";
  w.StopDaemon();
  ASSERT_TRUE(w.StartDaemon());
  Job("head -c 3000000 /dev/urandom | base64 > big.txt");
  std::string call = "DBUS_SYSTEM_BUS_ADDRESS='" + w.bus_address() + "' " + std::string(MATRIX_FD_CALL_BIN) +
                     " /org/sandboxd/Sandbox1/sandbox/" + id_ + " org.sandboxd.Sandbox1.Sandbox.Diff '@as []' '@FD@' | sleep 300";
  std::vector<pid_t> attackers;
  for (int i = 0; i < 4; ++i) attackers.push_back(SpawnAs(kAlice, {"/bin/sh", "-c", call}));
  std::this_thread::sleep_for(2s);
  Result refused = Ctl({"changes", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("MaxCallsInFlightPerUser=4"), std::string::npos) << refused.err;
  Result other = w.Sandboxctl(kBob, {"list"});
  EXPECT_EQ(other.status, 0) << other.err;
  w.RunAs("root", {"pkill", "-KILL", "-u", kAlice, "-x", "sleep"});
  for (pid_t pid : attackers) waitpid(pid, nullptr, 0);
  // The reader gone, the calls end, and alice is served again.
  EXPECT_TRUE(WaitUntil([&] { return Ctl({"changes", id_}).status == 0; }, 20s));
  std::remove(w.ConfigPath().c_str());
  w.StopDaemon();
  ASSERT_TRUE(w.StartDaemon());
}

}  // namespace
}  // namespace sandboxd::it
