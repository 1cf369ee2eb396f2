// The exhaustion attacks of issue 18, as a local user would make them against the real daemon.
// 1. One thread per call: a Diff into a pipe nobody reads pinned a daemon thread and an owner
//    helper for ever, also after the caller exited (the reader, a `sleep` of the attacker's,
//    kept the pipe open): 40 such calls made 40 more daemon threads. What must hold: the daemon's
//    threads stay bounded whatever one user sends, another user's calls are still served, and
//    a reader that stopped reading ends the call after [Limits] StalledReaderTimeout=, which
//    frees its worker and helper for the user's next calls.
// 2. Captured output lived in the daemon's memory: 8 MiB per job, 16 finished jobs kept per
//    sandbox, any number of sandboxes: 24 fd-less jobs of 8 MiB took the daemon from 15 to
//    195 MiB RSS. What must hold: captured output stays off the daemon's heap, one user's kept
//    output is bounded by [Limits] MaxCapturedOutputPerUser= without touching another's, and
//    it goes with its jobs.
// 4. Storage was the caller's choice: `create --quota` took any value, and under [Storage] Cap=
//    garbage collection removed a victim's suspended sandbox because the attacker's active
//    ones filled the store. What must hold: a quota above [Storage] MaxQuota= (or none) needs
//    polkit's manage action, and collection takes space only from users over their share.

#include <dirent.h>
#include <pwd.h>
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

/// Runs `script` in `sandbox_id` as `user` with no fds passed (its output captured), waits for
/// it and returns the job's object path.
std::string RunCaptured(const std::string& user, const std::string& sandbox_id, const std::string& script) {
  Result run = World().Gdbus(user, "/org/sandboxd/Sandbox1/sandbox/" + sandbox_id, "org.sandboxd.Sandbox1.Sandbox.Run",
                             {"['sh', '-c', '" + script + "']", "''", "{}", "{}", "{}", "0"});
  EXPECT_EQ(run.status, 0) << run.err;
  size_t quote = run.out.find('\'');
  if (quote == std::string::npos) return "";
  std::string job = run.out.substr(quote + 1, run.out.find('\'', quote + 1) - quote - 1);
  Result wait = World().Gdbus(user, job, "org.sandboxd.Sandbox1.Job.Wait");
  EXPECT_EQ(wait.out, "(0, 'exited')\n") << wait.err;
  return job;
}

bool OutputTruncated(const std::string& user, const std::string& job) {
  Result status = World().Gdbus(user, job, "org.sandboxd.Sandbox1.Job.GetStatus");
  EXPECT_EQ(status.status, 0) << status.err;
  return status.out.find("'output_truncated': <true>") != std::string::npos;
}

/// The files in the daemon's captured-output directory.
std::vector<std::string> OutputFiles() {
  std::vector<std::string> names;
  DIR* dir = opendir((World().dir() + "/state/output").c_str());
  if (!dir) return names;
  while (dirent* entry = readdir(dir))
    if (entry->d_name[0] != '.') names.push_back(entry->d_name);
  closedir(dir);
  return names;
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
                       " /org/sandboxd/Sandbox1/sandbox/" + id_ + " org.sandboxd.Sandbox1.Sandbox.Diff '@a(suu) []' '@FD@' '@a{sv} {}' | sleep 300";
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

// 24 jobs of 8 MiB of captured output each, in two sandboxes (16 kept in each): the output
// is kept whole (under the default per-user limit, 256 MiB), and not in the daemon's memory.
TEST_F(ExhaustionTest, CapturedOutputOfManyJobsStaysOutOfTheDaemonsMemory) {
  Result second = Ctl({"create", World().MakeProject(kAlice)});
  ASSERT_EQ(second.status, 0) << second.err;
  const std::string other = Trim(second.out);
  const pid_t daemon = World().daemon_pid();
  const long before = RssKibOf(daemon);
  ASSERT_GT(before, 0);
  std::string last;
  for (int i = 0; i < 24; ++i) last = RunCaptured(kAlice, i % 2 ? other : id_, "head -c 8388608 /dev/urandom");
  const long after = RssKibOf(daemon);
  std::fprintf(stderr, "daemon RSS: %ld KiB before, %ld KiB after 24 jobs of 8 MiB captured output\n", before, after);
  EXPECT_LT(after - before, 48 * 1024) << "captured output grew the daemon from " << before << " to " << after << " KiB";
  EXPECT_FALSE(OutputTruncated(kAlice, last));
  EXPECT_EQ(OutputFiles().size(), 24u);
  // The whole of it is there to read.
  Result tail = World().Gdbus(kAlice, last, "org.sandboxd.Sandbox1.Job.ReadOutput", {"8388607", "100"});
  EXPECT_EQ(tail.out.rfind("([byte 0x", 0), 0u) << tail.out;
  EXPECT_EQ(Ctl({"destroy", other}).status, 0);
  // (A destroy removes the sandbox's objects and files just after its reply.)
  EXPECT_TRUE(WaitUntil([] { return OutputFiles().size() == 12u; }, 20s)) << "the output of a destroyed sandbox's jobs outlived them";
}

// [Limits] MaxCapturedOutputPerUser=10M: alice's second job of 8 MiB keeps only 2 MiB and says
// it was truncated; bob's output is his own share; once alice's jobs are gone, so is her use.
TEST_F(ExhaustionTest, CapturedOutputPastTheUsersLimitIsDroppedAndAnotherUserKeepsHis) {
  ASSERT_NO_FATAL_FAILURE(Configure("[Limits]\nMaxCapturedOutputPerUser=10M\n"));
  const std::string eight = "head -c 8388608 /dev/zero";
  std::string first = RunCaptured(kAlice, id_, eight);
  std::string second = RunCaptured(kAlice, id_, eight);
  EXPECT_FALSE(OutputTruncated(kAlice, first));
  EXPECT_TRUE(OutputTruncated(kAlice, second)) << "alice holds 16 MiB of captured output past a limit of 10M";
  Result end = World().Gdbus(kAlice, second, "org.sandboxd.Sandbox1.Job.ReadOutput", {"2097150", "100"});
  EXPECT_EQ(end.out, "([byte 0x00, 0x00],)\n") << "the second job keeps what was left of the 10M: 2 MiB";

  std::string bob_project = World().MakeProject(kBob);
  Result bob_sandbox = World().Sandboxctl(kBob, {"create", bob_project});
  ASSERT_EQ(bob_sandbox.status, 0) << bob_sandbox.err;
  const std::string bob_id = Trim(bob_sandbox.out);
  EXPECT_FALSE(OutputTruncated(kBob, RunCaptured(kBob, bob_id, eight))) << "alice's output took bob's share";
  EXPECT_EQ(World().Sandboxctl(kBob, {"destroy", bob_id}).status, 0);

  // Her jobs go with a discard-free destroy of the sandbox; a new sandbox's job has room again.
  EXPECT_EQ(Ctl({"destroy", id_}).status, 0);
  Result again = Ctl({"create", project_});
  ASSERT_EQ(again.status, 0) << again.err;
  id_ = Trim(again.out);
  EXPECT_FALSE(OutputTruncated(kAlice, RunCaptured(kAlice, id_, eight)));
}

// bob (no manage action in the tests' rules) cannot give himself more than MaxQuota=64M, nor
// leave it out to have none; alice (manage allowed) can.
TEST_F(ExhaustionTest, AQuotaAboveMaxQuotaNeedsTheManageAction) {
  ASSERT_NO_FATAL_FAILURE(Configure("[Storage]\nMaxQuota=64M\n"));
  std::string bob_project = World().MakeProject(kBob);
  Result above = World().Sandboxctl(kBob, {"create", "--quota", "128M", bob_project});
  EXPECT_EQ(above.status, 1) << above.out;
  EXPECT_NE(above.err.find("above [Storage] MaxQuota=64.0 MiB"), std::string::npos) << above.err;
  Result unasked = World().Sandboxctl(kBob, {"create", bob_project});
  ASSERT_EQ(unasked.status, 0) << unasked.err;
  const std::string bob_id = Trim(unasked.out);
  Result shown = World().Sandboxctl(kBob, {"--json", "show", bob_id});
  EXPECT_NE(shown.out.find("\"quota_bytes\": 67108864"), std::string::npos) << "a sandbox without --quota got no quota: " << shown.out;
  EXPECT_EQ(World().Sandboxctl(kBob, {"destroy", bob_id}).status, 0);
  Result allowed = Ctl({"create", "--quota", "128M", World().MakeProject(kAlice)});
  ASSERT_EQ(allowed.status, 0) << allowed.err;
  EXPECT_EQ(Ctl({"destroy", Trim(allowed.out)}).status, 0);
}

// Under Cap=10M, bob's active sandboxes hold 12 MiB; alice's one suspended sandbox of 2 MiB is
// within her share and survives collection; bob's suspended one goes.
TEST_F(ExhaustionTest, CollectionTakesSpaceOnlyFromUsersOverTheirShare) {
  Job("head -c 2097152 /dev/urandom > victim.bin");
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  std::vector<std::string> bobs;
  for (const char* size : {"6", "6", "3"}) {
    Result made = World().Sandboxctl(kBob, {"create", World().MakeProject(kBob)});
    ASSERT_EQ(made.status, 0) << made.err;
    bobs.push_back(Trim(made.out));
    Result filled = World().Sandboxctl(kBob, {"run", bobs.back(), "--", "sh", "-c",
                                               std::string("head -c ") + size + "M /dev/urandom > fill-" + bobs.back()});
    EXPECT_EQ(filled.status, 0) << filled.err;
  }
  ASSERT_EQ(World().Sandboxctl(kBob, {"suspend", bobs[2]}).status, 0);
  ASSERT_NO_FATAL_FAILURE(Configure("[Storage]\nCap=10M\n"));
  Result gc = World().Sandboxctl("root", {"gc"});
  EXPECT_EQ(gc.status, 0) << gc.err;
  EXPECT_EQ(Ctl({"show", id_}).status, 0) << "alice's suspended sandbox was collected for bob's use: " << gc.out;
  EXPECT_NE(gc.out.find("Removed " + bobs[2] + ":"), std::string::npos) << gc.out;
  EXPECT_NE(World().DaemonLog().find("uid " + std::to_string(getpwnam(kBob)->pw_uid) + " held"), std::string::npos)
      << "the journal does not say whose share was over";
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(World().Sandboxctl(kBob, {"destroy", bobs[i]}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
