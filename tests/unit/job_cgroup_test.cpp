// JobCgroup's end of a job. Writing cgroup.kill takes the kernel's cgroup_mutex, which a process
// entering a cgroup (the next job's parked start, made while a job runs) holds through an RCU
// grace period: 3.5 ms of every job's end on average here, up to 17. A job's last processes are
// exiting by then, as a rule: EndRemains waits for cgroup.events to say they are gone and kills
// only what stays. Files in a plain directory stand for a cgroup's here (the kernel's cannot be
// made to say "populated" at will); the real ones are exercised by every job of the integration
// tests.

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>

#include "jobs/job_cgroup.h"
#include "temp_dir.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

using testing::ReadFile;
using testing::WriteFile;

class JobCgroupEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    WriteFile(dir_ / "cgroup.kill", "");
  }
  testing::ScopedTempDir dir_;
};

TEST_F(JobCgroupEndTest, KillAllWritesTheKill) {
  JobCgroup(dir_.path(), JobCgroup::kAdopt).KillAll();
  EXPECT_EQ(ReadFile(dir_ / "cgroup.kill"), "1");
}

TEST_F(JobCgroupEndTest, AGroupThatEmptiesInTimeIsNotKilled) {
  WriteFile(dir_ / "cgroup.events", "populated 1\nfrozen 0\n");
  std::thread leaving([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    // In place, one byte changed, as the kernel's file changes: a rewrite that truncated first
    // could be read empty, which says nothing, and the group would rightly be killed.
    UniqueFd events(open((dir_ / "cgroup.events").c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(pwrite(events.get(), "0", 1, std::string_view("populated ").size()), 1);
  });
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::seconds(10));
  leaving.join();
  EXPECT_EQ(ReadFile(dir_ / "cgroup.kill"), "");
}

TEST_F(JobCgroupEndTest, WhatStaysPastTheGraceIsKilled) {
  WriteFile(dir_ / "cgroup.events", "populated 1\nfrozen 0\n");
  const auto began = std::chrono::steady_clock::now();
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::milliseconds(40));
  EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(40));
  EXPECT_EQ(ReadFile(dir_ / "cgroup.kill"), "1");
}

TEST_F(JobCgroupEndTest, AGroupThatCannotSayIsKilledAtOnce) {
  // No cgroup.events, or one that does not say "populated": the kill is written, as before.
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::seconds(10));
  EXPECT_EQ(ReadFile(dir_ / "cgroup.kill"), "1");
  WriteFile(dir_ / "cgroup.kill", "");
  WriteFile(dir_ / "cgroup.events", "frozen 0\n");
  JobCgroup(dir_.path(), JobCgroup::kAdopt).EndRemains(std::chrono::seconds(10));
  EXPECT_EQ(ReadFile(dir_ / "cgroup.kill"), "1");
}

}  // namespace
}  // namespace sandboxd
