// Per-user limits of issue 18 ([Limits] in sandboxd.conf(5)), against the real daemon: past
// MaxSandboxesPerUser= a user's create is refused (QuotaExceeded, naming the limit and its value)
// while another user's still works; a sandbox with more roots than MaxRootsPerSandbox= is
// refused (InvalidArgument); past MaxRunningJobsPerUser= a job does not start. Before, any user could make any number of sandboxes, each with up
// to 64 roots (one mount each): the system's mount limit was a few thousand creates away.

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "harness.h"

namespace sandboxd::it {
namespace {

class UserLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    std::ofstream(World().ConfigPath()) << "[Limits]\nMaxSandboxesPerUser=2\nMaxRootsPerSandbox=2\nMaxRunningJobsPerUser=1\n";
    World().StopDaemon();
    ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  }
  void TearDown() override {
    for (const auto& [user, id] : made_) World().Sandboxctl(user, {"destroy", id});
    std::remove(World().ConfigPath().c_str());
    World().StopDaemon();
    EXPECT_TRUE(World().StartDaemon()) << World().DaemonLog();
  }
  Result Create(const std::string& user, const std::vector<std::string>& roots) {
    std::vector<std::string> args = {"create"};
    args.insert(args.end(), roots.begin(), roots.end());
    Result created = World().Sandboxctl(user, args);
    if (created.status == 0) made_.emplace_back(user, Trim(created.out));
    return created;
  }
  std::vector<std::pair<std::string, std::string>> made_;
};

TEST_F(UserLimitsTest, AUserPastMaxSandboxesPerUserIsRefusedAndAnotherIsNot) {
  for (int i = 0; i < 2; ++i) {
    Result created = Create(kAlice, {World().MakeProject(kAlice)});
    ASSERT_EQ(created.status, 0) << created.err;
  }
  Result third = Create(kAlice, {World().MakeProject(kAlice)});
  EXPECT_EQ(third.status, 1);
  EXPECT_NE(third.err.find("MaxSandboxesPerUser=2"), std::string::npos) << third.err;
  Result other = Create(kBob, {World().MakeProject(kBob)});
  EXPECT_EQ(other.status, 0) << "another user was refused: " << other.err;
  // Destroying one makes room again.
  ASSERT_EQ(World().Sandboxctl(kAlice, {"destroy", made_.front().second}).status, 0);
  made_.erase(made_.begin());
  Result again = Create(kAlice, {World().MakeProject(kAlice)});
  EXPECT_EQ(again.status, 0) << again.err;
}

TEST_F(UserLimitsTest, ASandboxWithMoreRootsThanMaxRootsPerSandboxIsRefused) {
  std::vector<std::string> roots = {World().MakeProject(kAlice), World().MakeProject(kAlice), World().MakeProject(kAlice)};
  Result three = Create(kAlice, roots);
  EXPECT_EQ(three.status, 1);
  EXPECT_NE(three.err.find("MaxRootsPerSandbox=2"), std::string::npos) << three.err;
  roots.pop_back();
  Result two = Create(kAlice, roots);
  EXPECT_EQ(two.status, 0) << two.err;
}

TEST_F(UserLimitsTest, AJobPastMaxRunningJobsPerUserDoesNotStartAndAnotherUsersDoes) {
  Result alices = Create(kAlice, {World().MakeProject(kAlice)});
  Result bobs = Create(kBob, {World().MakeProject(kBob)});
  ASSERT_EQ(alices.status, 0) << alices.err;
  ASSERT_EQ(bobs.status, 0) << bobs.err;
  const std::string alice_id = Trim(alices.out), bob_id = Trim(bobs.out);
  pid_t busy = StartSandboxctl(kAlice, {"run", alice_id, "--", "sleep", "6"});
  ASSERT_TRUE(WaitUntil([&] { return World().RunAs("root", {"pgrep", "-u", kAlice, "-x", "sleep"}).status == 0; }, std::chrono::seconds(10)));
  Result second = World().Sandboxctl(kAlice, {"run", alice_id, "--", "true"});
  EXPECT_EQ(second.status, 1);
  EXPECT_NE(second.err.find("MaxRunningJobsPerUser=1"), std::string::npos) << second.err;
  Result other = World().Sandboxctl(kBob, {"run", bob_id, "--", "true"});
  EXPECT_EQ(other.status, 0) << "another user's job was refused: " << other.err;
  int status = 0;
  waitpid(busy, &status, 0);
  // Once it ended, the slot is free again.
  Result after = World().Sandboxctl(kAlice, {"run", alice_id, "--", "true"});
  EXPECT_EQ(after.status, 0) << after.err;
}

}  // namespace
}  // namespace sandboxd::it
