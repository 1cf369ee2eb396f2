// What goes from overlayfs's index before a mount: whiteouts and entries no upper name links
// to; what stays: entries linked from the upper and directories (nfs_export's directory index).

#include "sandbox/overlay_index.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unique_fd.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::Exists;
using testing::ScopedTempDir;
using testing::WriteFile;

TEST(OverlayIndexTest, WhiteoutsAndOrphansGoAndLinkedEntriesDirectoriesAndWorkFilesStay) {
  if (geteuid() != 0) GTEST_SKIP() << "whiteouts need root";
  ScopedTempDir dir;
  std::string index = dir / "index", upper = dir / "upper";
  ASSERT_EQ(mkdir(index.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(upper.c_str(), 0700), 0);
  ASSERT_EQ(mknod((index + "/00fb-whiteout").c_str(), S_IFCHR | 0, makedev(0, 0)), 0);
  WriteFile(index + "/00fb-orphan", "no upper name\n");
  WriteFile(upper + "/kept", "an upper name\n");
  ASSERT_EQ(link((upper + "/kept").c_str(), (index + "/00fb-linked").c_str()), 0);
  ASSERT_EQ(mkdir((index + "/00fb-directory").c_str(), 0700), 0);
  ASSERT_EQ(mknod((index + "/#1f").c_str(), S_IFCHR | 0, makedev(0, 0)), 0);  // overlayfs's own
  UniqueFd index_fd(open(index.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // Mounted: whiteouts only (an entry with no upper name yet may be a copy-up under way).
  EXPECT_EQ(ForgetDeadIndexEntries(index_fd.get(), false), 1u);
  EXPECT_FALSE(Exists(index + "/00fb-whiteout"));
  EXPECT_TRUE(Exists(index + "/00fb-orphan"));
  EXPECT_EQ(ForgetDeadIndexEntries(index_fd.get(), true), 1u);
  EXPECT_FALSE(Exists(index + "/00fb-orphan"));
  EXPECT_TRUE(Exists(index + "/00fb-linked"));
  EXPECT_TRUE(Exists(index + "/00fb-directory"));
  EXPECT_TRUE(Exists(index + "/#1f")) << "overlayfs's own work file was removed";
  EXPECT_EQ(ForgetDeadIndexEntries(index_fd.get(), true), 0u);
}

}  // namespace
}  // namespace sandboxd
