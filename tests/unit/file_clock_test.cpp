#include "runtime/file_clock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "temp_dir.h"

namespace sandboxd {
namespace {

int64_t CtimeNs(const std::string& path) {
  struct stat st;
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
}

// A job's start mark is the fine "now", taken without waiting; its command runs once the file
// clock is past it. Then what it changes is stamped after the mark, and what was changed before
// the mark is stamped at or before it, whichever clock stamped it.
TEST(FileClockTest, WhatIsChangedOnceTheClockIsPastAMarkIsStampedAfterIt) {
  testing::ScopedTempDir dir;
  const std::string before = dir.path() + "/before", after = dir.path() + "/after";
  for (int round = 0; round < 50; ++round) {
    testing::WriteFile(before, "b");
    const int64_t mark = FileClockFineNowNs();
    EXPECT_LE(CtimeNs(before), mark) << "round " << round;
    WaitForFileClockPast(mark);
    EXPECT_GT(FileClockNowNs(), mark);
    testing::WriteFile(after, "a");
    EXPECT_GT(CtimeNs(after), mark) << "round " << round;
  }
}

TEST(FileClockTest, NoWaitWhenTheClockIsPastTheMarkAlready) {
  const int64_t long_ago = FileClockNowNs() - 1000000000;
  const int64_t fine_before = FileClockFineNowNs();
  WaitForFileClockPast(long_ago);
  EXPECT_LT(FileClockFineNowNs() - fine_before, 1000000) << "waited for a mark already passed";
}

// A mark ahead of the clock by more than a tick stands for a wall clock stepped back since the
// mark was taken (an NTP step at boot): waiting for it would hold a job's start for as long as
// the step. Here an hour ahead.
TEST(FileClockTest, NoWaitForAMarkTheClockWasSteppedBackFrom) {
  const int64_t ahead = FileClockFineNowNs() + int64_t{3600} * 1000000000;
  const int64_t fine_before = FileClockFineNowNs();
  WaitForFileClockPast(ahead);
  EXPECT_LT(FileClockFineNowNs() - fine_before, 1000000000) << "waited for a mark an hour ahead";
}

}  // namespace
}  // namespace sandboxd
