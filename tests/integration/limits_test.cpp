// Memory and process limits of jobs (run --memory-max, --tasks-max), through the kernel's
// memory and pids cgroup controllers: the test machine is a hybrid system whose controllers sit
// in v1 hierarchies, so that is the path these tests take (the start-up log says which).

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using LimitsTest = AliceSandboxTest;

/// The line of the daemon's log that says where job limits can be set.
std::string LimitsLogLine() {
  std::string log = World().DaemonLog();
  size_t at = log.rfind("job limits (run --memory-max, --tasks-max): ");
  return at == std::string::npos ? "" : log.substr(at, log.find('\n', at) - at);
}

/// Skips the test when the machine offers no `controller` to sandboxd (its log says so).
#define REQUIRE_CONTROLLER(controller)                                                                  \
  do {                                                                                                 \
    std::string line = LimitsLogLine();                                                                \
    ASSERT_NE(line, "") << "sandboxd did not say where job limits go";                                 \
    if (line.find(controller ": not available") != std::string::npos) GTEST_SKIP() << line;            \
  } while (0)

/// Whether the cgroup at `group` holds one process, and that is a parked sandboxd-job-starter.
bool HoldsAParkedStarterAlone(const std::string& group) {
  std::ifstream procs(group + "/cgroup.procs");
  std::vector<std::string> pids;
  for (std::string pid; procs >> pid;) pids.push_back(pid);
  if (pids.size() != 1) return false;
  std::ifstream comm("/proc/" + pids[0] + "/comm");
  std::string name;
  std::getline(comm, name);
  return name == "sandboxd-job-st";  // the kernel keeps 15 bytes of a program's name
}

/// The job groups sandboxd made in the v1 hierarchy of `controller` (its log names the parent),
/// but the next job's, made ahead of it (job_starts_ahead.h): one that holds its parked starter
/// and nothing else.
std::vector<std::string> JobGroupsLeft(const std::string& controller) {
  std::string line = LimitsLogLine();
  std::string marker = controller + ": cgroup v1 ";
  size_t at = line.find(marker);
  if (at == std::string::npos) return {};
  std::string parent = line.substr(at + marker.size(), line.find(';', at) - at - marker.size());
  std::vector<std::string> left;
  if (DIR* dir = opendir(parent.c_str())) {
    while (dirent* entry = readdir(dir))
      if (std::string(entry->d_name).rfind("job-", 0) == 0 && !HoldsAParkedStarterAlone(parent + "/" + entry->d_name))
        left.push_back(entry->d_name);
    closedir(dir);
  }
  return left;
}

// Twelve background processes under a limit of eight tasks: a fork fails inside the job (which
// stops sh), and the job's groups go with it. Without the limit all twelve start.
TEST_F(LimitsTest, ATaskLimitStopsForksBeyondIt) {
  REQUIRE_CONTROLLER("pids");
  const std::string script = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait; echo done";
  Result limited = Ctl({"run", "--tasks-max", "8", id_, "--", "sh", "-c", script});
  EXPECT_NE(limited.err.find("fork"), std::string::npos) << "no fork failed under the limit: " << limited.err;
  EXPECT_NE(limited.status, 0);
  EXPECT_EQ(limited.out, "");
  Result free = Ctl({"run", id_, "--", "sh", "-c", script});
  EXPECT_EQ(free.status, 0) << free.err;
  EXPECT_EQ(free.out, "done\n");
  EXPECT_EQ(free.err, "");
  EXPECT_TRUE(WaitUntil([] { return JobGroupsLeft("pids").empty(); })) << "a job's pids group outlived it";
}

// A job that allocates 256 MiB under a limit of 64 MiB is killed by the kernel, and the run
// says why; the same job without the limit succeeds.
TEST_F(LimitsTest, AMemoryLimitKillsAJobThatGoesOverItAndSaysSo) {
  REQUIRE_CONTROLLER("memory");
  const std::string hog = "s = 'x' * (256 << 20); print(len(s))";
  Result limited = Ctl({"run", "--memory-max", "64M", id_, "--", "python3", "-c", hog});
  EXPECT_EQ(limited.status, 128 + SIGKILL) << limited.err;
  EXPECT_NE(limited.err.find("memory limit"), std::string::npos) << limited.err;
  Result free = Ctl({"run", id_, "--", "python3", "-c", hog});
  EXPECT_EQ(free.status, 0) << free.err;
  EXPECT_EQ(free.out, std::to_string(256 << 20) + "\n");
  EXPECT_TRUE(WaitUntil([] { return JobGroupsLeft("memory").empty(); })) << "a job's memory group outlived it";
}

// The reason reaches clients that pass no streams too (Job.Wait over D-Bus).
TEST_F(LimitsTest, TheReasonIsMemoryOverDBus) {
  REQUIRE_CONTROLLER("memory");
  Result started = World().Gdbus(kAlice, "/org/sandboxd/Sandbox1/sandbox/" + id_, "org.sandboxd.Sandbox1.Sandbox.Run",
                                 {"['python3', '-c', \"s = 'x' * (256 << 20)\"]", "''", "{}", "{}",
                                  "{'memory_max': <uint64 33554432>}", "0"});
  ASSERT_EQ(started.status, 0) << started.err;
  std::string job = started.out.substr(started.out.find('\'') + 1);
  job = job.substr(0, job.find('\''));
  Result waited = World().Gdbus(kAlice, job, "org.sandboxd.Sandbox1.Job.Wait");
  ASSERT_EQ(waited.status, 0) << waited.err;
  EXPECT_EQ(waited.out, "(137, 'memory')\n");
}

TEST_F(LimitsTest, LimitsTooSmallOrMalformedAreRefused) {
  Result tiny = Ctl({"run", "--memory-max", "1M", id_, "--", "true"});
  EXPECT_EQ(tiny.status, 1);
  EXPECT_NE(tiny.err.find("below the least a job can start with, 8 MiB"), std::string::npos) << tiny.err;
  Result few = Ctl({"run", "--tasks-max", "2", id_, "--", "true"});
  EXPECT_EQ(few.status, 1);
  EXPECT_NE(few.err.find("process limit of 2"), std::string::npos) << few.err;
  Result words = Ctl({"run", "--memory-max", "lots", id_, "--", "true"});
  EXPECT_EQ(words.status, 2);
  EXPECT_NE(words.err.find("--memory-max takes a size"), std::string::npos) << words.err;
  Result negative = Ctl({"run", "--tasks-max", "-3", id_, "--", "true"});
  EXPECT_EQ(negative.status, 2) << negative.err;
}

// [Limits] DefaultTasksMax=8: a job that names no limit gets it (the twelve background
// processes fail to fork); more than the default is the manage action's to grant: bob (no
// manage in the tests' rules) is refused with the default named, alice (manage) may.
TEST_F(LimitsTest, ADefaultLimitHoldsAJobThatNamesNoneAndMoreNeedsManage) {
  REQUIRE_CONTROLLER("pids");
  std::ofstream(World().ConfigPath()) << "[Limits]\nDefaultTasksMax=8\n";
  World().StopDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  const std::string script = "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 1 & done; wait; echo done";
  Result limited = Ctl({"run", id_, "--", "sh", "-c", script});
  EXPECT_NE(limited.status, 0);
  EXPECT_NE(limited.err.find("fork"), std::string::npos) << "no fork failed under the default limit: " << limited.err;
  Result more = Ctl({"run", "--tasks-max", "64", id_, "--", "sh", "-c", script});
  EXPECT_EQ(more.status, 0) << more.err;
  EXPECT_EQ(more.out, "done\n");
  std::string bob_project = World().MakeProject(kBob);
  Result bob_sandbox = World().Sandboxctl(kBob, {"create", bob_project});
  ASSERT_EQ(bob_sandbox.status, 0) << bob_sandbox.err;
  std::string bob_id = Trim(bob_sandbox.out);
  Result refused = World().Sandboxctl(kBob, {"run", "--tasks-max", "64", bob_id, "--", "true"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("64 tasks, above [Limits] DefaultTasksMax=8"), std::string::npos) << refused.err;
  EXPECT_EQ(World().Sandboxctl(kBob, {"run", "--tasks-max", "6", bob_id, "--", "true"}).status, 0) << "less than the default needs no one";
  EXPECT_EQ(World().Sandboxctl(kBob, {"destroy", bob_id}).status, 0);
  std::remove(World().ConfigPath().c_str());
  World().StopDaemon();
  EXPECT_TRUE(World().StartDaemon()) << World().DaemonLog();
}

}  // namespace
}  // namespace sandboxd::it
