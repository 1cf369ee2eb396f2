// A child started before its program is known (base/parked_spawn.h), and the next job's start
// made ahead with it (jobs/job_starts_ahead.h): the real sandboxd-job-starter of this build.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/parked_spawn.h"
#include "base/process.h"
#include "jobs/job_cgroup.h"
#include "jobs/job_starts_ahead.h"

namespace sandboxd {
namespace {

std::string StarterPath() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "../../daemon/sandboxd-job-starter";
}

std::string ReadAllFrom(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(got));
  return text;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Whether `pid` is a live process (not gone, not a zombie).
bool Alive(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

/// Runs `script` with sh through `parked`, stdout into a pipe; returns {output, exit status}.
std::pair<std::string, int> RunThrough(ParkedSpawn parked, const std::string& script, std::vector<std::string> env = {},
                                       const std::string& cwd = "/") {
  int out[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  UniqueFd read_end(out[0]), write_end(out[1]);
  UniqueFd dev_null(open("/dev/null", O_RDWR | O_CLOEXEC));
  SpawnOptions options;
  options.path = "/bin/sh";
  options.argv = {"sh", "-c", script};
  options.env = std::move(env);
  options.cwd = cwd;
  options.fds = {{0, dev_null.get()}, {1, write_end.get()}, {2, dev_null.get()}, {5, dev_null.get()}};
  ChildProcess child = std::move(parked).Exec(options);
  write_end.reset();
  std::string output = ReadAllFrom(read_end.get());
  return {output, ExitStatusFromWaitStatus(child.Wait())};
}

class ParkedSpawnTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(StarterPath().c_str(), X_OK) != 0) GTEST_SKIP() << "no sandboxd-job-starter at " << StarterPath();
  }
};

TEST(ChildProcessTest, AMovedChildIsStillRunning) {
  SpawnOptions options;
  options.path = "/bin/sleep";
  options.argv = {"sleep", "30"};
  pid_t pid;
  {
    ChildProcess first = Spawn(options);
    pid = first.pid();
    ChildProcess second(std::move(first));
    ChildProcess third = std::move(second);
    // `first` and `second` go here: owning nothing, they must kill nothing.
    {
      ChildProcess gone_first(std::move(first));
      (void)gone_first;
    }
    ASSERT_TRUE(Alive(pid)) << "a moved-from ChildProcess killed the child";
    EXPECT_EQ(third.pid(), pid);
    third.Kill(SIGKILL);
    EXPECT_EQ(ExitStatusFromWaitStatus(third.Wait()), 128 + SIGKILL);
  }
}

TEST_F(ParkedSpawnTest, BecomesTheProgramItIsGivenWithItsEnvironmentAndDirectory) {
  ParkedSpawn parked = ParkedSpawn::Start(StarterPath(), {});
  ASSERT_TRUE(parked.valid());
  const pid_t pid = parked.pid();
  auto [output, status] = RunThrough(std::move(parked), "echo \"$FOO\" $$; pwd", {"FOO=bar baz"}, "/tmp");
  EXPECT_EQ(output, "bar baz " + std::to_string(pid) + "\n/tmp\n");
  EXPECT_EQ(status, 0);
}

/// The fds `pid` holds (sorted names in /proc/PID/fd) once it runs `comm` and holds `expected`,
/// waited for up to 10 s; else what it held last. Read from outside, so that nothing the program
/// does to list them adds one of its own. Waited for because a program's start may hold an fd
/// for a moment: on a busy machine the exec can take over a second, and a sanitized build's
/// runtime reads /proc/self/maps as it starts (CI once listed that as fd 4). A leaked fd of the
/// daemon's stays for good, so waiting cannot hide one.
std::vector<std::string> OpenFdsOnceSettled(pid_t pid, const std::string& comm, const std::vector<std::string>& expected) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::vector<std::string> fds;
  for (int i = 0; i < 2000; ++i, usleep(5000)) {
    if (ReadFile(proc + "/comm") != comm + "\n") continue;
    fds.clear();
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(proc + "/fd", error)) fds.push_back(entry.path().filename());
    std::sort(fds.begin(), fds.end());
    if (fds == expected) return fds;
  }
  EXPECT_EQ(ReadFile(proc + "/comm"), comm + "\n") << "the program did not start within 10 s";
  return fds;
}

TEST_F(ParkedSpawnTest, TheProgramHasExactlyTheFdsItWasGiven) {
  // Not the socket it waited on, nor anything of the daemon's: 0, 1, 2 and 5 as given. Looked at
  // from here, in a program that opens nothing (a shell's own listing raced with its pipes).
  UniqueFd dev_null(open("/dev/null", O_RDWR | O_CLOEXEC));
  SpawnOptions options;
  options.path = "/bin/sleep";
  options.argv = {"sleep", "30"};
  options.fds = {{0, dev_null.get()}, {1, dev_null.get()}, {2, dev_null.get()}, {5, dev_null.get()}};
  ChildProcess child = ParkedSpawn::Start(StarterPath(), {}).Exec(options);
  const std::vector<std::string> given{"0", "1", "2", "5"};
  EXPECT_EQ(OpenFdsOnceSettled(child.pid(), "sleep", given), given);
  child.Kill(SIGKILL);
  child.Wait();
}

// Parked for as long as no job comes, as root: it must hold nothing of the daemon's (its bus,
// its database, the owners' directories), only /dev/null and its socket, and no environment.
TEST_F(ParkedSpawnTest, AParkedChildHoldsNothingButItsSocket) {
  // Something of "the daemon's" open while it is started, not close-on-exec.
  UniqueFd daemons(open("/", O_RDONLY | O_DIRECTORY));
  ASSERT_TRUE(daemons);
  ParkedSpawn parked = ParkedSpawn::Start(StarterPath(), {});
  const std::string proc = "/proc/" + std::to_string(parked.pid());
  const std::vector<std::string> its_own{"0", "1", "2", "3"};
  EXPECT_EQ(OpenFdsOnceSettled(parked.pid(), "sandboxd-job-st", its_own), its_own);
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/fd/0"), "/dev/null");
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/fd/3").string().rfind("socket:", 0), 0u);
  EXPECT_EQ(ReadFile(proc + "/environ"), "");
}

// Entering a cgroup waits for an RCU grace period (9-17 ms here), and the next job's start is
// parked while a job runs. A child that enters its cgroups holding copies of the daemon's fds
// (another job's output and status pipes among them, close-on-exec but not yet closed) keeps
// that job's pipes open: its end was seen up to 17 ms late. What a child is not given is gone
// before it enters a cgroup. Here a full pipe stands for a cgroup.procs that makes it wait.
TEST_F(ParkedSpawnTest, AChildEnteringItsCgroupsHoldsNoOtherPipeOpen) {
  int slow[2];
  ASSERT_EQ(pipe2(slow, O_CLOEXEC | O_NONBLOCK), 0);
  UniqueFd slow_read(slow[0]), slow_write(slow[1]);
  const std::string filler(65536, 'x');
  while (write(slow_write.get(), filler.data(), filler.size()) > 0) {
  }
  ASSERT_EQ(fcntl(slow_write.get(), F_SETFL, 0), 0);  // the child's write of "0" now waits
  int other[2];
  ASSERT_EQ(pipe2(other, O_CLOEXEC), 0);
  UniqueFd other_read(other[0]), other_write(other[1]);

  // Start sleeps until the child has exec'ed, which is after its write to the full pipe.
  std::atomic<bool> started{false};
  std::thread starting([&] {
    try {
      ParkedSpawn::Start(StarterPath(), {slow_write.get()});
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    started = true;
  });
  usleep(100 * 1000);  // the child is in its write by now
  other_write.reset();
  pollfd ended{other_read.get(), POLLIN, 0};
  const int ready = poll(&ended, 1, 2000);
  // Let the child on: drain the pipe until Start has returned.
  EXPECT_EQ(fcntl(slow_read.get(), F_SETFL, O_NONBLOCK), 0);
  char buffer[65536];
  while (!started)
    if (read(slow_read.get(), buffer, sizeof buffer) <= 0) usleep(1000);
  starting.join();
  EXPECT_EQ(ready, 1) << "the other pipe's write end was held open by a child entering its cgroups";
}

TEST_F(ParkedSpawnTest, AProgramThatCannotStartIsReportedAndTheChildReaped) {
  ParkedSpawn parked = ParkedSpawn::Start(StarterPath(), {});
  const pid_t pid = parked.pid();
  SpawnOptions options;
  options.path = "/nonexistent/program";
  options.argv = {"program"};
  try {
    std::move(parked).Exec(options);
    FAIL() << "started a program that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/program"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(Alive(pid));
}

TEST_F(ParkedSpawnTest, AParkedChildNeverUsedIsGoneWithIt) {
  pid_t pid;
  {
    ParkedSpawn parked = ParkedSpawn::Start(StarterPath(), {});
    pid = parked.pid();
    ASSERT_TRUE(Alive(pid));
  }
  EXPECT_FALSE(Alive(pid));
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1) << "not reaped";
}

TEST_F(ParkedSpawnTest, AChildThatDiedParkedIsNoLongerValid) {
  ParkedSpawn parked = ParkedSpawn::Start(StarterPath(), {});
  ASSERT_EQ(kill(parked.pid(), SIGKILL), 0);
  for (int i = 0; i < 200 && parked.valid(); ++i) usleep(5000);
  EXPECT_FALSE(parked.valid());
}

/// A cgroup2 group of this test's own for jobs' groups, removed after.
class JobStartsAheadTest : public ParkedSpawnTest {
 protected:
  void SetUp() override {
    ParkedSpawnTest::SetUp();
    if (IsSkipped()) return;
    std::string mount = Cgroup2Mount();
    if (mount.empty() || geteuid() != 0) GTEST_SKIP() << "needs root and a cgroup2 hierarchy";
    parent_ = mount + "/sandboxd-unit-starts-ahead-" + std::to_string(getpid());
    if (mkdir(parent_.c_str(), 0755) != 0) GTEST_SKIP() << "cannot make " << parent_ << ": " << strerror(errno);
  }
  void TearDown() override {
    if (!parent_.empty()) rmdir(parent_.c_str());
  }
  std::string parent_;
  LimitControllers no_limits_;
};

TEST_F(JobStartsAheadTest, TheNextStartIsInItsCgroupBeforeItsJobIsKnown) {
  JobStartsAhead ahead(StarterPath(), parent_, no_limits_);
  ASSERT_TRUE(ahead.WaitReady(std::chrono::seconds(10)));
  std::optional<PreparedJobStart> start = ahead.Take();
  ASSERT_TRUE(start);
  ASSERT_TRUE(start->cgroup);
  EXPECT_EQ(start->cgroup->path(), parent_ + "/job-" + start->job_id);
  // Parked in the job's cgroup already: the program it becomes is there from its first instruction.
  EXPECT_EQ(ReadFile(start->cgroup->path() + "/cgroup.procs"), std::to_string(start->starter.pid()) + "\n");
  auto [output, status] = RunThrough(std::move(start->starter), "cat /proc/self/cgroup");
  EXPECT_NE(output.find("/job-" + start->job_id), std::string::npos) << output;
  EXPECT_EQ(status, 0);
  // The next is made at once, under another id.
  ASSERT_TRUE(ahead.WaitReady(std::chrono::seconds(10)));
  std::optional<PreparedJobStart> next = ahead.Take();
  ASSERT_TRUE(next);
  EXPECT_NE(next->job_id, start->job_id);
}

TEST_F(JobStartsAheadTest, WhatWasMadeAheadIsRemovedWithIt) {
  std::string group;
  pid_t pid = 0;
  {
    JobStartsAhead ahead(StarterPath(), parent_, no_limits_);
    ASSERT_TRUE(ahead.WaitReady(std::chrono::seconds(10)));
    for (const auto& entry : std::filesystem::directory_iterator(parent_))
      if (entry.is_directory()) group = entry.path();
    ASSERT_FALSE(group.empty());
    pid = std::stoi(ReadFile(group + "/cgroup.procs"));
  }
  EXPECT_FALSE(std::filesystem::exists(group)) << group;
  EXPECT_FALSE(Alive(pid));
}

TEST_F(JobStartsAheadTest, AStartWhoseChildDiedIsNotHandedOut) {
  JobStartsAhead ahead(StarterPath(), parent_, no_limits_);
  ASSERT_TRUE(ahead.WaitReady(std::chrono::seconds(10)));
  std::string group;
  for (const auto& entry : std::filesystem::directory_iterator(parent_))
    if (entry.is_directory()) group = entry.path();
  pid_t pid = std::stoi(ReadFile(group + "/cgroup.procs"));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  for (int i = 0; i < 200 && Alive(pid); ++i) usleep(5000);
  EXPECT_FALSE(ahead.Take()) << "handed out a start whose child is dead";
}

TEST(JobStartsAheadNothingTest, NothingIsMadeAheadWhereJobsEnterNoCgroup) {
  LimitControllers none;
  JobStartsAhead ahead("/nonexistent/starter", std::nullopt, none);
  EXPECT_FALSE(ahead.WaitReady(std::chrono::milliseconds(50)));
  EXPECT_FALSE(ahead.Take());
}

}  // namespace
}  // namespace sandboxd
