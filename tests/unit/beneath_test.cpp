#include "base/beneath.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "base/errors.h"
#include "unique_fd.h"
#include "deep_tree.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::DeepName;
using testing::DeepPath;
using testing::MakeDeepDirs;
using testing::ReadAt;
using testing::ScopedTempDir;
using testing::WriteFile;

TEST(BeneathTest, OpensNestedPathsAndRefusesSymlinksAndDotDot) {
  ScopedTempDir dir;
  mkdir((dir / "a").c_str(), 0755);
  mkdir((dir / "a/b").c_str(), 0755);
  WriteFile(dir / "a/b/f", "x");
  symlink("b", (dir / "a/link").c_str());
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  EXPECT_TRUE(OpenBeneath(root.get(), "a/b/f", O_RDONLY));
  EXPECT_TRUE(OpenBeneath(root.get(), ".", O_RDONLY | O_DIRECTORY));
  EXPECT_FALSE(OpenBeneath(root.get(), "a/link/f", O_RDONLY));
  EXPECT_EQ(errno, ELOOP);
  EXPECT_FALSE(OpenBeneath(root.get(), "../etc/passwd", O_RDONLY));
  EXPECT_THROW(CheckRelativePath("a/../b"), Error);
  EXPECT_THROW(CheckRelativePath("/abs"), Error);
  EXPECT_NO_THROW(CheckRelativePath("a/b.c"));
  EXPECT_EQ(SplitParent("a/b/c"), (std::pair<std::string, std::string>{"a/b", "c"}));
  EXPECT_EQ(SplitParent("c"), (std::pair<std::string, std::string>{".", "c"}));
}

// 30 levels of 200 bytes: 6029 bytes, past PATH_MAX, which no one syscall takes whole.
constexpr int kDeep = 30;

TEST(BeneathTest, OpensAndStatsPathsLongerThanPathMax) {
  ScopedTempDir dir;
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  UniqueFd bottom = MakeDeepDirs(root.get(), kDeep);
  ASSERT_TRUE(bottom);
  WriteFile("/proc/self/fd/" + std::to_string(bottom.get()) + "/f", "deep\n");
  std::string path = DeepPath(kDeep) + "/f";
  ASSERT_GT(path.size(), size_t{PATH_MAX});

  UniqueFd file = OpenBeneath(root.get(), path, O_RDONLY);
  ASSERT_TRUE(file) << strerror(errno);
  char buffer[16] = {};
  EXPECT_EQ(read(file.get(), buffer, sizeof buffer), 5);
  EXPECT_STREQ(buffer, "deep\n");
  UniqueFd made = OpenBeneath(root.get(), DeepPath(kDeep) + "/new", O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_TRUE(made) << strerror(errno);
  EXPECT_EQ(ReadAt(bottom.get(), "new"), "");

  auto st = StatBeneath(root.get(), path);
  ASSERT_TRUE(st);
  EXPECT_TRUE(S_ISREG(st->st_mode));
  EXPECT_EQ(st->st_size, 5);
  EXPECT_FALSE(StatBeneath(root.get(), DeepPath(kDeep) + "/missing"));
  ParentDirs dirs(root.get());
  std::string name;
  int parent = dirs.Open(path, name);
  ASSERT_GE(parent, 0) << strerror(errno);
  EXPECT_EQ(name, "f");
  EXPECT_EQ(ReadAt(parent, "f"), "deep\n");
}

TEST(BeneathTest, RefusesASymlinkAnywhereOnALongPath) {
  ScopedTempDir dir;
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  UniqueFd at19 = MakeDeepDirs(root.get(), 19);
  ASSERT_TRUE(at19);
  // Level 20 (in the first piece a walk resolves at once) and level 25 (in the second) are
  // symlinks to real directories that hold the rest of the path: followed, they would open it.
  mkdir((dir / "elsewhere").c_str(), 0755);
  UniqueFd elsewhere(open((dir / "elsewhere").c_str(), O_PATH | O_DIRECTORY));
  UniqueFd rest = MakeDeepDirs(elsewhere.get(), kDeep);
  ASSERT_TRUE(rest);
  WriteFile("/proc/self/fd/" + std::to_string(rest.get()) + "/f", "x");
  std::string target = dir / "elsewhere";
  ASSERT_EQ(symlinkat(target.c_str(), at19.get(), DeepName(20).c_str()), 0);
  std::string through_20 = DeepPath(19) + "/" + DeepName(20) + "/" + DeepPath(kDeep) + "/f";
  EXPECT_FALSE(OpenBeneath(root.get(), through_20, O_RDONLY));
  EXPECT_EQ(errno, ELOOP);

  ASSERT_EQ(unlinkat(at19.get(), DeepName(20).c_str(), 0), 0);
  UniqueFd at24 = MakeDeepDirs(root.get(), 24);
  ASSERT_TRUE(at24);
  ASSERT_EQ(symlinkat(target.c_str(), at24.get(), DeepName(25).c_str()), 0);
  std::string through_25 = DeepPath(24) + "/" + DeepName(25) + "/" + DeepPath(kDeep) + "/f";
  EXPECT_FALSE(OpenBeneath(root.get(), through_25, O_RDONLY));
  EXPECT_EQ(errno, ELOOP);
  EXPECT_FALSE(StatBeneath(root.get(), through_25));
  // ... and as the last component.
  EXPECT_FALSE(OpenBeneath(root.get(), DeepPath(24) + "/" + DeepName(25), O_RDONLY));
  EXPECT_EQ(errno, ELOOP);
  EXPECT_FALSE(OpenBeneath(root.get(), DeepPath(24) + "/" + DeepName(25), O_PATH | O_DIRECTORY));
}

TEST(BeneathTest, RefusesDotDotOnALongPath) {
  ScopedTempDir dir;
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  ASSERT_TRUE(MakeDeepDirs(root.get(), kDeep));
  WriteFile(dir / "top", "x");
  // Back up to the root (never out of it): still refused, wherever the pieces are cut.
  std::string up = DeepPath(kDeep);
  for (int level = 0; level < kDeep; ++level) up += "/..";
  EXPECT_FALSE(OpenBeneath(root.get(), up + "/top", O_RDONLY));
  EXPECT_EQ(errno, EXDEV);
  EXPECT_FALSE(OpenBeneath(root.get(), up + "/../top", O_RDONLY));
  EXPECT_EQ(errno, EXDEV);
}

}  // namespace
}  // namespace sandboxd
