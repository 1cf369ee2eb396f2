// The overlay marks a commit takes off what it puts live come back to the entries still in the
// upper when the commit does not stand (overlay_marks.h): byte for byte, only to the entry they
// came from (same path, same inode), and from a note a kill cut short as far as it goes.

#include "commit/overlay_marks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "base/fd.h"
#include "base/overlay.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

const std::string kOrigin("\x00\xfb\x21\x01\x00 binary\x00 handle", 19);

class OverlayMarksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkdir((dir_ / "upper").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ / "upper/d").c_str(), 0755), 0);
    WriteFile(dir_ / "upper/d/f", "f\n");
    WriteFile(dir_ / "upper/g", "g\n");
    if (lsetxattr((dir_ / "upper/d/f").c_str(), Mark("origin").c_str(), kOrigin.data(), kOrigin.size(), 0) != 0)
      GTEST_SKIP() << Mark("origin") << " cannot be set here";
    ASSERT_EQ(lsetxattr((dir_ / "upper/d/f").c_str(), Mark("nlink").c_str(), "U+1", 3, 0), 0);
    ASSERT_EQ(lsetxattr((dir_ / "upper/g").c_str(), Mark("origin").c_str(), "g-origin", 8, 0), 0);
    upper_.reset(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  static std::string Mark(const char* name) { return std::string(OverlayXattrPrefix()) + name; }
  std::string MarkOf(const std::string& path, const char* name) const {
    std::string value(64, '\0');
    ssize_t size = lgetxattr((dir_ / path).c_str(), Mark(name).c_str(), value.data(), value.size());
    return size < 0 ? "<none>" : value.substr(0, static_cast<size_t>(size));
  }
  void Take(const std::string& path) {
    OverlayMarksTaken marks(dir_ / "marks");
    UniqueFd entry(open((dir_ / ("upper/" + path)).c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(entry);
    marks.TakeFrom(entry.get(), 0, path);
    marks.Close();
  }

  ScopedTempDir dir_;
  UniqueFd upper_;
};

TEST_F(OverlayMarksTest, MarksTakenOffComeBackByteForByte) {
  {
    OverlayMarksTaken marks(dir_ / "marks");
    for (const char* path : {"d/f", "g"}) {
      UniqueFd entry(open((dir_ / ("upper/" + std::string(path))).c_str(), O_RDONLY | O_CLOEXEC));
      marks.TakeFrom(entry.get(), 0, path);
    }
    marks.Close();
  }
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), "<none>");
  EXPECT_EQ(MarkOf("upper/d/f", "nlink"), "<none>");
  EXPECT_EQ(MarkOf("upper/g", "origin"), "<none>");

  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 2u);
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), kOrigin);
  EXPECT_EQ(MarkOf("upper/d/f", "nlink"), "U+1");
  EXPECT_EQ(MarkOf("upper/g", "origin"), "g-origin");
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "nothing-noted", {upper_.get()}), 0u);
}

TEST_F(OverlayMarksTest, AnotherEntryAtThePathGetsNothing) {
  Take("d/f");
  // Moved aside (kept, so that its inode number is not the new file's).
  ASSERT_EQ(rename((dir_ / "upper/d/f").c_str(), (dir_ / "upper/aside").c_str()), 0);
  WriteFile(dir_ / "upper/d/f", "another file\n");
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 0u);
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), "<none>");
  EXPECT_EQ(MarkOf("upper/aside", "origin"), "<none>");
}

TEST_F(OverlayMarksTest, ANoteCutShortGivesBackWhatItHolds) {
  Take("d/f");
  struct stat st;
  ASSERT_EQ(stat((dir_ / "marks").c_str(), &st), 0);
  ASSERT_EQ(truncate((dir_ / "marks").c_str(), st.st_size - 1), 0);  // the nlink note, cut
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 1u);
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), kOrigin);
}

}  // namespace
}  // namespace sandboxd
