// JobCgroup's kill at a job's end. Writing cgroup.kill takes the kernel's cgroup_mutex, which a
// process entering a cgroup (the next job's parked start, made while a job runs) holds through
// an RCU grace period: 3.5 ms of every job's end on average here, up to 17. A group whose
// processes are all gone (or exiting) has nothing to kill, and its cgroup.procs, which takes no
// such lock, lists none. Files in a plain directory stand for a cgroup's here (the kernel's
// cannot be made to list a process at will); the real ones are exercised by every job of the
// integration tests.

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "jobs/job_cgroup.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class JobCgroupKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    Write(dir_ / "cgroup.kill", "");
  }
  testing::ScopedTempDir dir_;
};

TEST_F(JobCgroupKillTest, AGroupWithProcessesLeftIsKilled) {
  Write(dir_ / "cgroup.procs", "4242\n");
  JobCgroup(dir_.path(), JobCgroup::kAdopt).KillAll();
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "1");
}

TEST_F(JobCgroupKillTest, AGroupWithNoProcessLeftIsNotWritten) {
  Write(dir_ / "cgroup.procs", "");
  JobCgroup(dir_.path(), JobCgroup::kAdopt).KillAll();
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "");
}

TEST_F(JobCgroupKillTest, AGroupThatCannotSayIsKilled) {
  // No cgroup.procs to read (or one that cannot be read): the kill is written, as before.
  JobCgroup(dir_.path(), JobCgroup::kAdopt).KillAll();
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "1");
  Write(dir_ / "cgroup.kill", "");
  ASSERT_EQ(mkdir((dir_ / "cgroup.procs").c_str(), 0755), 0);  // read fails: EISDIR
  JobCgroup(dir_.path(), JobCgroup::kAdopt).KillAll();
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "1");
}

// At a job's end its last processes are often still exiting: they are waited for (a change of
// cgroup.events), and killed only if they stay past the grace.
TEST_F(JobCgroupKillTest, AtTheEndAGroupThatEmptiesInTimeIsNotKilled) {
  Write(dir_ / "cgroup.procs", "4242\n");
  Write(dir_ / "cgroup.events", "populated 1\nfrozen 0\n");
  std::thread leaving([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    Write(dir_ / "cgroup.events", "populated 0\nfrozen 0\n");
  });
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::seconds(10));
  leaving.join();
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "");
}

TEST_F(JobCgroupKillTest, AtTheEndWhatStaysPastTheGraceIsKilled) {
  Write(dir_ / "cgroup.procs", "4242\n");
  Write(dir_ / "cgroup.events", "populated 1\nfrozen 0\n");
  const auto began = std::chrono::steady_clock::now();
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::milliseconds(40));
  EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(40));
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "1");
}

TEST_F(JobCgroupKillTest, AtTheEndAGroupThatCannotSayIsKilledAtOnce) {
  Write(dir_ / "cgroup.procs", "4242\n");
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::seconds(10));
  EXPECT_EQ(Read(dir_ / "cgroup.kill"), "1");
}

}  // namespace
}  // namespace sandboxd
