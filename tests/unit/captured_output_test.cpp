#include "jobs/captured_output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "temp_dir.h"

namespace sandboxd {
namespace {

// A job's output is kept up to its own cap and its owner's share, read back as written, and
// gone (file and share) with the job.
TEST(CapturedOutputTest, KeepsWhatTheJobAndTheOwnerHaveRoomForAndGivesItBack) {
  testing::ScopedTempDir dir;
  auto budget = std::make_shared<OutputBudget>(10);
  {
    CapturedOutput first(dir.path(), "job-1", 1000, budget, 8);
    EXPECT_TRUE(first.Append("hello ", 6));
    EXPECT_TRUE(first.Append("world", 5));  // only "wo" fits the job's 8
    EXPECT_EQ(first.size(), 8u);
    EXPECT_TRUE(first.truncated());
    EXPECT_EQ(first.Read(0, 100), "hello wo");
    EXPECT_EQ(first.Read(6, 1), "w");
    EXPECT_EQ(first.Read(8, 10), "");
    struct stat st;
    ASSERT_EQ(stat((dir / "job-1").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);

    CapturedOutput second(dir.path(), "job-2", 1000, budget, 8);
    EXPECT_TRUE(second.Append("abcdef", 6));  // the owner's 10 leave it 2
    EXPECT_EQ(second.Read(0, 100), "ab");
    EXPECT_TRUE(second.truncated());
    CapturedOutput other_user(dir.path(), "job-3", 1001, budget, 8);
    EXPECT_TRUE(other_user.Append("abcdef", 6));
    EXPECT_FALSE(other_user.truncated()) << "one user's output took another's share";
    EXPECT_EQ(budget->Held(1000), 10u);
  }
  EXPECT_EQ(budget->Held(1000), 0u);
  EXPECT_EQ(budget->Held(1001), 0u);
  struct stat st;
  EXPECT_NE(stat((dir / "job-1").c_str(), &st), 0) << "the output file outlived its job";
}

// Once closed (the job ended) nothing more is written, and what was is still read.
TEST(CapturedOutputTest, AClosedOutputTakesNothingMoreAndStaysReadable) {
  testing::ScopedTempDir dir;
  auto budget = std::make_shared<OutputBudget>(100);
  CapturedOutput output(dir.path(), "job", 1000, budget, 100);
  output.Append("kept", 4);
  output.Close();
  EXPECT_FALSE(output.Append("more", 4));
  EXPECT_EQ(output.Read(0, 100), "kept");
  EXPECT_EQ(budget->Held(1000), 4u);
}

// A name already there (a leftover, or something planted) is never written through.
TEST(CapturedOutputTest, AnExistingNameIsRefused) {
  testing::ScopedTempDir dir;
  ASSERT_EQ(symlink("/etc/passwd", (dir / "job").c_str()), 0);
  auto budget = std::make_shared<OutputBudget>(100);
  EXPECT_THROW(CapturedOutput(dir.path(), "job", 1000, budget, 100), std::exception);
}

}  // namespace
}  // namespace sandboxd
