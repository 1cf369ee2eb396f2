// The overlay marks a commit takes off what it puts live come back to the entries still in the
// upper when the commit does not stand (overlay_marks.h): byte for byte, only to the entry they
// came from (same path, same inode), and from a note a kill cut short as far as it goes.

#include "commit/overlay_marks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "unique_fd.h"
#include "base/overlay.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

const std::string kOrigin("\x00\xfb\x21\x01\x00 binary\x00 handle", 19);

// Each test runs with the calls this kernel has and with entries opened, as older kernels do.
class OverlayMarksTest : public ::testing::TestWithParam<OverlayMarksTaken::Calls> {
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
  void Take(const std::vector<std::string>& paths) {
    OverlayMarksTaken marks(dir_ / "marks", GetParam());
    marks.TakeFromEach(upper_.get(), 0, paths);
    marks.Close();
  }

  ScopedTempDir dir_;
  UniqueFd upper_;
};

TEST_P(OverlayMarksTest, MarksTakenOffComeBackByteForByte) {
  Take({"d/f", "g"});
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), "<none>");
  EXPECT_EQ(MarkOf("upper/d/f", "nlink"), "<none>");
  EXPECT_EQ(MarkOf("upper/g", "origin"), "<none>");

  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 2u);
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), kOrigin);
  EXPECT_EQ(MarkOf("upper/d/f", "nlink"), "U+1");
  EXPECT_EQ(MarkOf("upper/g", "origin"), "g-origin");
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "nothing-noted", {upper_.get()}), 0u);
}

TEST_P(OverlayMarksTest, AnotherEntryAtThePathGetsNothing) {
  Take({"d/f"});
  // Moved aside (kept, so that its inode number is not the new file's).
  ASSERT_EQ(rename((dir_ / "upper/d/f").c_str(), (dir_ / "upper/aside").c_str()), 0);
  WriteFile(dir_ / "upper/d/f", "another file\n");
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 0u);
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), "<none>");
  EXPECT_EQ(MarkOf("upper/aside", "origin"), "<none>");
}

TEST_P(OverlayMarksTest, ANoteCutShortGivesBackWhatItHolds) {
  Take({"d/f"});
  struct stat st;
  ASSERT_EQ(stat((dir_ / "marks").c_str(), &st), 0);
  ASSERT_EQ(truncate((dir_ / "marks").c_str(), st.st_size - 1), 0);  // the nlink note, cut
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 1u);
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), kOrigin);
}

// More entries than one batch, in directories that alternate (each batch is one directory's,
// whose fd the next directory's closes), a missing entry, a fifo and a file without marks among
// them: every mark comes off, every one comes back, and no other entry gets one.
TEST_P(OverlayMarksTest, EntriesOfManyDirectoriesAndBatches) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: its marks are trusted.* attributes, which only root may set";
  std::vector<std::string> made;
  for (int i = 0; i < 600; ++i) {
    std::string dir = i % 200 < 100 ? "d" : "e" + std::to_string(i / 200);
    ASSERT_TRUE(mkdir((dir_ / ("upper/" + dir)).c_str(), 0755) == 0 || errno == EEXIST);
    std::string path = dir + "/n" + std::to_string(i);
    WriteFile(dir_ / ("upper/" + path), "n\n");
    if (i % 7 != 0) {
      ASSERT_EQ(lsetxattr((dir_ / ("upper/" + path)).c_str(), Mark("origin").c_str(), path.data(), path.size(), 0), 0);
    }
    made.push_back(path);
  }
  std::vector<std::string> paths = made;
  ASSERT_EQ(mkfifo((dir_ / "upper/d/fifo").c_str(), 0644), 0);
  ASSERT_EQ(lsetxattr((dir_ / "upper/d/fifo").c_str(), Mark("origin").c_str(), "fifo", 4, 0), 0);
  paths.insert(paths.begin() + 150, "d/fifo");
  paths.insert(paths.begin() + 300, "d/missing");
  paths.insert(paths.begin() + 301, "missing/too");
  Take(paths);
  for (const auto& path : paths) EXPECT_EQ(MarkOf("upper/" + path, "origin"), "<none>") << path;
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), kOrigin);  // not asked for

  size_t marked = 0;
  for (int i = 0; i < 600; ++i) marked += i % 7 != 0;
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), marked + 1);
  for (size_t i = 0; i < made.size(); ++i) EXPECT_EQ(MarkOf("upper/" + made[i], "origin"), i % 7 != 0 ? made[i] : "<none>") << made[i];
  EXPECT_EQ(MarkOf("upper/d/fifo", "origin"), "fifo");
}

// A symlink in the upper keeps its marks (overlayfs reads them only inside an upper layer) and
// is never followed: the marks of what it points at stay too.
TEST_P(OverlayMarksTest, ASymlinkIsNeitherStrippedNorFollowed) {
  ASSERT_EQ(symlink("g", (dir_ / "upper/link").c_str()), 0);
  ASSERT_EQ(symlink("d", (dir_ / "upper/dirlink").c_str()), 0);
  Take({"link", "dirlink/f"});
  EXPECT_EQ(MarkOf("upper/g", "origin"), "g-origin");
  EXPECT_EQ(MarkOf("upper/d/f", "origin"), kOrigin);
  EXPECT_EQ(GiveBackOverlayMarks(dir_ / "marks", {upper_.get()}), 0u);
}

std::string CallsName(const ::testing::TestParamInfo<OverlayMarksTaken::Calls>& info) {
  return info.param == OverlayMarksTaken::Calls::kByName ? "ByName" : "ThroughOpen";
}

// By name only where this kernel has the *xattrat calls.
std::vector<OverlayMarksTaken::Calls> CallsHere() {
  if (OverlayMarksTaken::CallsOfThisKernel() == OverlayMarksTaken::Calls::kByName)
    return {OverlayMarksTaken::Calls::kByName, OverlayMarksTaken::Calls::kThroughOpen};
  return {OverlayMarksTaken::Calls::kThroughOpen};
}

INSTANTIATE_TEST_SUITE_P(Calls, OverlayMarksTest, ::testing::ValuesIn(CallsHere()), CallsName);

}  // namespace
}  // namespace sandboxd
