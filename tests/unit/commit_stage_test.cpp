// Staging for partial commits on hand-made layers: what moves into the stage, what a rollback
// puts back, and how the upper is settled after the commit went live.

#include "commit/commit_stage.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/fs_util.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::Exists;
using testing::ScopedTempDir;
using testing::WriteFile;

Change Make(const std::string& path, ChangeKind kind, EntryType new_type) {
  Change change;
  change.path = path;
  change.kind = kind;
  change.new_type = new_type;
  return change;
}

class CommitStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "whiteouts and trusted xattrs need root";
    upper_ = dir_ / "upper";
    stage_ = dir_ / "stage";
    live_ = dir_ / "live";
    mkdir(upper_.c_str(), 0755);
    mkdir(live_.c_str(), 0755);
    mkdir(stage_.c_str(), 0700);
    WriteFile(upper_ + "/a", "new a\n");
    mkdir((upper_ + "/d").c_str(), 0755);
    WriteFile(upper_ + "/d/x", "x\n");
    WriteFile(upper_ + "/d/y", "y\n");
    ASSERT_EQ(mknod((upper_ + "/w").c_str(), S_IFCHR | 0, makedev(0, 0)), 0);
    ASSERT_EQ(symlink("a", (upper_ + "/s").c_str()), 0);
    upper_fd_ = OpenDirectoryNoSymlinks(upper_, O_PATH);
    stage_fd_ = OpenDirectoryNoSymlinks(stage_, O_PATH);
    live_fd_ = OpenDirectoryNoSymlinks(live_, O_PATH);
  }

  ScopedTempDir dir_;
  std::string upper_, stage_, live_;
  UniqueFd upper_fd_, stage_fd_, live_fd_;
};

TEST_F(CommitStageTest, ApprovedEntriesMoveAndTheRestStays) {
  StageEntries(upper_fd_.get(), stage_fd_.get(),
               {Make("a", ChangeKind::kModified, EntryType::kFile), Make("d", ChangeKind::kAdded, EntryType::kDirectory),
                Make("d/x", ChangeKind::kAdded, EntryType::kFile), Make("w", ChangeKind::kDeleted, EntryType::kNone)},
               getuid(), getgid());
  EXPECT_TRUE(Exists(stage_ + "/a"));
  EXPECT_TRUE(Exists(stage_ + "/d/x"));
  EXPECT_TRUE(Exists(stage_ + "/w"));
  EXPECT_FALSE(Exists(upper_ + "/a"));
  EXPECT_FALSE(Exists(upper_ + "/d/x"));
  EXPECT_FALSE(Exists(upper_ + "/w"));
  EXPECT_TRUE(Exists(upper_ + "/d/y")) << "not approved: stays in the sandbox";
  EXPECT_TRUE(Exists(upper_ + "/s"));
}

TEST_F(CommitStageTest, UnstagePutsEverythingBackAndDropsMergedCopies) {
  StageEntries(upper_fd_.get(), stage_fd_.get(),
               {Make("a", ChangeKind::kModified, EntryType::kFile), Make("d/x", ChangeKind::kAdded, EntryType::kFile),
                Make("w", ChangeKind::kDeleted, EntryType::kNone)},
               getuid(), getgid());
  // A merged file stands beside the upper's own full version.
  UniqueFd merged = CreateStagedFile(upper_fd_.get(), live_fd_.get(), stage_fd_.get(), "d/y", getuid(), getgid());
  ASSERT_TRUE(merged);
  ASSERT_EQ(write(merged.get(), "merged\n", 7), 7);
  Unstage(upper_fd_.get(), stage_fd_.get());
  EXPECT_EQ(testing::ReadFile(upper_ + "/a"), "new a\n");
  EXPECT_EQ(testing::ReadFile(upper_ + "/d/x"), "x\n");
  EXPECT_EQ(testing::ReadFile(upper_ + "/d/y"), "y\n") << "the upper's version wins over a merged copy";
  struct stat st;
  ASSERT_EQ(lstat((upper_ + "/w").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_FALSE(Exists(stage_ + "/a"));
  EXPECT_FALSE(Exists(stage_ + "/d/y"));
  Unstage(upper_fd_.get(), stage_fd_.get());  // again: nothing to do, no error
}

// The other names of a file whose original the stage keeps go into the stage beside it, where
// an undo finds them: the file and its names are one again after Unstage. A name the stage
// already holds (committed itself) just goes from the upper.
TEST_F(CommitStageTest, OtherNamesOfAStagedFileWaitInTheStageAndComeBackWithIt) {
  ASSERT_EQ(link((upper_ + "/a").c_str(), (upper_ + "/d/other").c_str()), 0);
  ASSERT_EQ(link((upper_ + "/a").c_str(), (upper_ + "/twice").c_str()), 0);
  StageEntries(upper_fd_.get(), stage_fd_.get(), {Make("a", ChangeKind::kModified, EntryType::kFile)}, getuid(), getgid());
  WriteFile(stage_ + "/twice", "committed itself\n");
  struct stat staged;
  ASSERT_EQ(lstat((stage_ + "/a").c_str(), &staged), 0);
  StashNamesOf(upper_fd_.get(), stage_fd_.get(), {staged.st_ino}, getuid(), getgid());
  EXPECT_FALSE(Exists(upper_ + "/d/other"));
  EXPECT_FALSE(Exists(upper_ + "/twice"));
  EXPECT_TRUE(Exists(upper_ + "/d/x")) << "a name of another file left the upper";
  StashNamesOf(upper_fd_.get(), stage_fd_.get(), {staged.st_ino}, getuid(), getgid());  // again: nothing to do
  Unstage(upper_fd_.get(), stage_fd_.get());
  struct stat a, other;
  ASSERT_EQ(lstat((upper_ + "/a").c_str(), &a), 0);
  ASSERT_EQ(lstat((upper_ + "/d/other").c_str(), &other), 0);
  EXPECT_EQ(a.st_ino, other.st_ino) << "the names came back as two files";
  EXPECT_EQ(testing::ReadFile(upper_ + "/twice"), "committed itself\n");
}

// A mode change is no hunk: the merged file of a partly approved one keeps the live mode.
TEST_F(CommitStageTest, AMergedFileHasTheLiveFilesMode) {
  mkdir((live_ + "/d").c_str(), 0755);
  WriteFile(live_ + "/d/y", "old y\n");
  ASSERT_EQ(chmod((live_ + "/d/y").c_str(), 0600), 0);
  UniqueFd merged = CreateStagedFile(upper_fd_.get(), live_fd_.get(), stage_fd_.get(), "d/y", getuid(), getgid());
  ASSERT_TRUE(merged);
  struct stat st;
  ASSERT_EQ(fstat(merged.get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(CommitStageTest, SettlingClearsTheOpaqueMarkAndStaleIndexLinks) {
  ASSERT_EQ(setxattr((upper_ + "/d").c_str(), "trusted.overlay.opaque", "y", 1, 0), 0);
  std::string index = dir_ / "index";
  mkdir(index.c_str(), 0700);
  ASSERT_EQ(link((upper_ + "/a").c_str(), (index + "/0123").c_str()), 0);
  struct stat a;
  ASSERT_EQ(lstat((upper_ + "/a").c_str(), &a), 0);
  CommitStep place;
  place.action = StepAction::kPlace;
  place.path = "a";
  place.new_ino = a.st_ino;
  CommitStep make;
  make.action = StepAction::kMakeDirectory;
  make.path = "d";
  UniqueFd index_fd = OpenDirectoryNoSymlinks(index, O_PATH);
  std::string live = dir_ / "live";
  mkdir(live.c_str(), 0755);
  UniqueFd live_fd = OpenDirectoryNoSymlinks(live, O_PATH);
  SettleUpperAfterCommit(upper_fd_.get(), live_fd.get(), stage_fd_.get(), index_fd.get(), {place, make}, 0, 0);
  EXPECT_LT(getxattr((upper_ + "/d").c_str(), "trusted.overlay.opaque", nullptr, 0), 0);
  EXPECT_FALSE(Exists(index + "/0123"));
  SettleUpperAfterCommit(upper_fd_.get(), live_fd.get(), stage_fd_.get(), index_fd.get(), {place, make}, 0, 0);  // idempotent
}

// An opaque directory that stays a directory (its mode changed, some of its new entries
// committed): the live entries it hid whose deletion was not committed keep hidden by
// whiteouts, the committed ones show through, and the mark goes with the commit for an undo.
TEST_F(CommitStageTest, SettlingAnOpaqueDirectoryKeepsUncommittedDeletionsAsWhiteouts) {
  ASSERT_EQ(setxattr((upper_ + "/d").c_str(), "trusted.overlay.opaque", "y", 1, 0), 0);
  std::string live = dir_ / "live";
  mkdir(live.c_str(), 0755);
  mkdir((live + "/d").c_str(), 0755);
  WriteFile(live + "/d/old", "deleted in the sandbox, not committed\n");
  WriteFile(live + "/d/x", "committed x\n");  // went live: moved out of the upper
  unlink((upper_ + "/d/x").c_str());
  UniqueFd live_fd = OpenDirectoryNoSymlinks(live, O_PATH);
  CommitStep chmod;
  chmod.action = StepAction::kChmod;
  chmod.path = "d";
  CommitStep place;
  place.action = StepAction::kPlace;
  place.path = "d/x";
  SettleUpperAfterCommit(upper_fd_.get(), live_fd.get(), stage_fd_.get(), -1, {chmod, place}, 0, 0);
  EXPECT_LT(getxattr((upper_ + "/d").c_str(), "trusted.overlay.opaque", nullptr, 0), 0);
  struct stat st;
  ASSERT_EQ(lstat((upper_ + "/d/old").c_str(), &st), 0) << "the uncommitted deletion was not kept";
  EXPECT_TRUE(S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0));
  EXPECT_FALSE(Exists(upper_ + "/d/x")) << "the committed entry must show through, not be whited out";
  EXPECT_TRUE(Exists(upper_ + "/d/y"));
  char value[4];
  EXPECT_EQ(getxattr((stage_ + "/d").c_str(), "trusted.overlay.opaque", value, sizeof value), 1) << "no mark kept for an undo";
  // An undo puts the mark back on the upper's directory.
  Unstage(upper_fd_.get(), stage_fd_.get());
  EXPECT_EQ(getxattr((upper_ + "/d").c_str(), "trusted.overlay.opaque", value, sizeof value), 1);
}

}  // namespace
}  // namespace sandboxd
