#include "bus/job_options.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace sandboxd {
namespace {

Code RefusalOf(const std::map<std::string, sdbus::Variant>& options, std::string* message = nullptr) {
  try {
    ParseJobOptions(options, "s1");
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return Code::kFailed;  // not refused at all
}

TEST(JobOptionsTest, NoOptionsMeanOfflineUnlimitedNothingHidden) {
  JobOptions options = ParseJobOptions({}, "s1");
  EXPECT_FALSE(options.network);
  EXPECT_EQ(options.timeout_sec, 0u);
  EXPECT_TRUE(options.hide.empty());
  EXPECT_TRUE(options.live_feed);
}

TEST(JobOptionsTest, EachOptionIsRead) {
  JobOptions options = ParseJobOptions({{"network", sdbus::Variant(true)},
                                        {"timeout_sec", sdbus::Variant(uint64_t{30})},
                                        {"live_feed", sdbus::Variant(false)},
                                        {"hide", sdbus::Variant(std::vector<std::string>{"/home/u/.ssh", "/srv/keys"})}},
                                       "s1");
  EXPECT_TRUE(options.network);
  EXPECT_EQ(options.timeout_sec, 30u);
  EXPECT_FALSE(options.live_feed);
  EXPECT_EQ(options.hide, (std::vector<std::string>{"/home/u/.ssh", "/srv/keys"}));
}

TEST(JobOptionsTest, MemoryAndTaskLimitsAreReadAndTooSmallOnesRefused) {
  JobOptions options =
      ParseJobOptions({{"memory_max", sdbus::Variant(uint64_t{64} << 20)}, {"tasks_max", sdbus::Variant(uint64_t{100})}}, "s1");
  EXPECT_EQ(options.limits.memory_max, uint64_t{64} << 20);
  EXPECT_EQ(options.limits.tasks_max, 100u);
  EXPECT_TRUE(options.limits.any());
  EXPECT_FALSE(ParseJobOptions({}, "s1").limits.any());
  std::string message;
  EXPECT_EQ(RefusalOf({{"memory_max", sdbus::Variant(uint64_t{1} << 20)}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("8 MiB"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"tasks_max", sdbus::Variant(uint64_t{3})}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("process limit of 3"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"tasks_max", sdbus::Variant(int32_t{10})}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("type t"), std::string::npos) << message;
}

TEST(JobLimitsTest, DescribedAsAPersonReadsThem) {
  EXPECT_EQ(DescribeLimits({uint64_t{64} << 20, 0}), "memory 64 MiB");
  EXPECT_EQ(DescribeLimits({uint64_t{2} << 30, 50}), "memory 2 GiB, 50 tasks");
  EXPECT_EQ(DescribeLimits({0, 7}), "7 tasks");
  EXPECT_EQ(DescribeLimits({1000, 0}), "memory 1000 bytes");
}

TEST(JobLimitsTest, V1GroupsGoBelowTheDaemonsOwnGroup) {
  EXPECT_EQ(LimitControllers::V1Parent("/sys/fs/cgroup/pids", "/", "sandboxd-jobs"), "/sys/fs/cgroup/pids/sandboxd-jobs");
  EXPECT_EQ(LimitControllers::V1Parent("/sys/fs/cgroup/memory", "/system.slice/sandboxd.service", "sandboxd-jobs"),
            "/sys/fs/cgroup/memory/system.slice/sandboxd.service/sandboxd-jobs");
  EXPECT_EQ(LimitControllers::V1Parent("", "/", "sandboxd-jobs"), "");
}

// Where the machine offers no controller, a limit is refused, naming what is missing, and
// nothing is made.
TEST(JobLimitsTest, ALimitWithoutItsControllerIsRefused) {
  LimitControllers none;
  EXPECT_FALSE(none.memory());
  EXPECT_FALSE(none.tasks());
  try {
    none.Apply("job-1", {uint64_t{64} << 20, 0}, "");
    FAIL() << "a memory limit without a memory controller was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("memory limits are not available on this machine"), std::string::npos) << e.what();
  }
  EXPECT_THROW(none.Apply("job-1", {0, 10}, ""), Error);
  EXPECT_NE(none.Apply("job-1", {}, ""), nullptr) << "no limit needs no controller";
}

TEST(JobOptionsTest, UnknownKeysWrongTypesAndLimitsAreRefusedByName) {
  std::string message;
  EXPECT_EQ(RefusalOf({{"netwrok", sdbus::Variant(true)}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("'netwrok'"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"network", sdbus::Variant(std::string("yes"))}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("'network'"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"timeout_sec", sdbus::Variant(int32_t{5})}}), Code::kInvalidArgument);
  EXPECT_EQ(RefusalOf({{"timeout_sec", sdbus::Variant(kMaxJobTimeoutSec + 1)}}, &message), Code::kInvalidArgument);
  EXPECT_NE(message.find(std::to_string(kMaxJobTimeoutSec)), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"hide", sdbus::Variant(std::vector<std::string>{".ssh"})}}, &message), Code::kInvalidPath);
  EXPECT_NE(message.find("'.ssh'"), std::string::npos) << message;
  EXPECT_EQ(RefusalOf({{"hide", sdbus::Variant(std::vector<std::string>(kMaxHiddenPaths + 1, "/x"))}}), Code::kInvalidArgument);
}

}  // namespace
}  // namespace sandboxd
