#include "service/service_status.h"

#include <gtest/gtest.h>

#include "runtime/clock.h"

namespace sandboxd {
namespace {

TEST(StatusLineTest, CountsSandboxesAndRunningJobsInWords) {
  EXPECT_EQ(StatusLine(0, 0), "0 sandboxes, no job running");
  EXPECT_EQ(StatusLine(1, 1), "1 sandbox, 1 job running");
  EXPECT_EQ(StatusLine(3, 2), "3 sandboxes, 2 jobs running");
}


TEST(IdleLongEnoughTest, OnlyAfterTheWholeQuietPeriod) {
  Activity quiet{.last_call_usec = 10 * kSecondUsec};
  EXPECT_FALSE(IdleLongEnough(quiet, 14 * kSecondUsec, 5));
  EXPECT_TRUE(IdleLongEnough(quiet, 15 * kSecondUsec, 5));
}

TEST(IdleLongEnoughTest, NeverWhileAJobRunsOrAnOperationIsUnderWay) {
  EXPECT_FALSE(IdleLongEnough({.running_jobs = 1, .last_call_usec = 0}, 100 * kSecondUsec, 5));
  EXPECT_FALSE(IdleLongEnough({.operations = 1, .last_call_usec = 0}, 100 * kSecondUsec, 5));
}

TEST(IdleLongEnoughTest, NeverWithoutIdleExit) {
  EXPECT_FALSE(IdleLongEnough({}, 1000 * kSecondUsec, 0));
}

}  // namespace
}  // namespace sandboxd
