#include "base/beneath.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/fd.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

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

}  // namespace
}  // namespace sandboxd
