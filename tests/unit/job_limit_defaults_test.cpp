#include <gtest/gtest.h>

#include "jobs/job_limits.h"

namespace sandboxd {
namespace {

// What a job asked for wins; else the default, where the machine has the controller for it (a
// default that cannot be had is left out rather than failing a job that asked for nothing).
TEST(JobLimitDefaultsTest, AJobGetsTheDefaultsItDidNotNameWhereTheyCanBeHad) {
  const JobLimits defaults{512ull << 20, 4096};
  JobLimits none = WithDefaults({}, defaults, true, true);
  EXPECT_EQ(none.memory_max, 512ull << 20);
  EXPECT_EQ(none.tasks_max, 4096u);
  JobLimits own = WithDefaults({64ull << 20, 8}, defaults, true, true);
  EXPECT_EQ(own.memory_max, 64ull << 20);
  EXPECT_EQ(own.tasks_max, 8u);
  JobLimits no_memory_controller = WithDefaults({}, defaults, false, true);
  EXPECT_EQ(no_memory_controller.memory_max, 0u);
  EXPECT_EQ(no_memory_controller.tasks_max, 4096u);
  EXPECT_FALSE(WithDefaults({}, {0, 0}, true, true).any());
}

// More than a default is named, as the polkit question and a refusal say it.
TEST(JobLimitDefaultsTest, AskingForMoreThanADefaultIsNamed) {
  const JobLimits defaults{512ull << 20, 4096};
  EXPECT_EQ(AboveDefaults({512ull << 20, 4096}, defaults), "");
  EXPECT_EQ(AboveDefaults({64ull << 20, 0}, defaults), "");
  EXPECT_EQ(AboveDefaults({1ull << 30, 0}, defaults), "memory 1 GiB, above [Limits] DefaultMemoryMax=512 MiB");
  EXPECT_EQ(AboveDefaults({1ull << 30, 5000}, defaults),
            "memory 1 GiB, above [Limits] DefaultMemoryMax=512 MiB; 5000 tasks, above [Limits] DefaultTasksMax=4096");
  EXPECT_EQ(AboveDefaults({1ull << 40, 1000000}, {0, 0}), "") << "no default, no bound";
}

}  // namespace
}  // namespace sandboxd
