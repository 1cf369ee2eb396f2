// Renames as an unprivileged user, with real parts: a file moved in the sandbox shows as one
// rename in `changes` and `diff`, is decided as one, and commits as one move of the live file
// (same inode), which undo moves back. A moved-and-edited file, or one the owner cannot read,
// is no rename.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

ino_t InodeOf(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}


class RenameTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "printf 'one\\ntwo\\n' > notes.txt; printf 'keep\\n' > other.txt"},
                            {.cwd = project_}).status, 0);
  }
};

TEST_F(RenameTest, AMovedFileIsOneRenameInChangesAndDiff) {
  Job("mv notes.txt moved.txt");
  EXPECT_EQ(Changes(), "A moved.txt (renamed from notes.txt)\nD notes.txt (renamed to moved.txt)\n");

  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_EQ(diff.out, "diff --git a/notes.txt b/moved.txt\nsimilarity index 100%\nrename from notes.txt\nrename to moved.txt\n");
  // Either path names the whole rename.
  EXPECT_EQ(Ctl({"diff", id_, "notes.txt"}).out, diff.out);

  Result json = Ctl({"--json", "changes", id_});
  ASSERT_EQ(json.status, 0) << json.err;
  auto parsed = nlohmann::json::parse(json.out);
  ASSERT_EQ(parsed.size(), 2u) << json.out;
  EXPECT_EQ(parsed[0].value("renamed_from", ""), "notes.txt") << json.out;
  EXPECT_EQ(parsed[1].value("renamed_to", ""), "moved.txt") << json.out;
}

TEST_F(RenameTest, ApprovingOneHalfApprovesTheRenameAndTheCommitMovesTheLiveFile) {
  ino_t before = InodeOf(project_ + "/notes.txt");
  Job("mv notes.txt moved.txt; echo new > extra.txt");
  Result approve = Ctl({"approve", id_, "notes.txt"});
  ASSERT_EQ(approve.status, 0) << approve.err;
  EXPECT_EQ(Changes(), "A extra.txt\nA moved.txt (renamed from notes.txt) [approved]\nD notes.txt (renamed to moved.txt) [approved]\n");

  // A partial commit (extra.txt stays): the live file itself moves, keeping its inode.
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_FALSE(Exists(project_ + "/notes.txt"));
  EXPECT_EQ(InodeOf(project_ + "/moved.txt"), before);
  EXPECT_FALSE(Exists(project_ + "/extra.txt"));
  EXPECT_EQ(Changes(), "A extra.txt\n");

  // Undo moves it back, and the rename is in the sandbox again, approved as it was.
  Result undo = Ctl({"undo", id_});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(InodeOf(project_ + "/notes.txt"), before);
  EXPECT_FALSE(Exists(project_ + "/moved.txt"));
  EXPECT_EQ(Changes(), "A extra.txt\nA moved.txt (renamed from notes.txt) [approved]\nD notes.txt (renamed to moved.txt) [approved]\n");
}

TEST_F(RenameTest, ARenameIntoANewDirectoryWithANewModeCommitsWhole) {
  ino_t before = InodeOf(project_ + "/notes.txt");
  Job("mkdir docs && mv notes.txt docs/notes.txt && chmod 755 docs/notes.txt");
  Result diff = Ctl({"diff", id_});
  EXPECT_EQ(diff.out, "diff --git a/notes.txt b/docs/notes.txt\nold mode 100644\nnew mode 100755\nsimilarity index 100%\n"
                      "rename from notes.txt\nrename to docs/notes.txt\n");
  Result commit = Ctl({"commit", id_, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(InodeOf(project_ + "/docs/notes.txt"), before);
  EXPECT_EQ(ModeOf(project_ + "/docs/notes.txt"), 0755u);
  EXPECT_FALSE(Exists(project_ + "/notes.txt"));
  EXPECT_EQ(Changes(), "");
}

TEST_F(RenameTest, RejectingARenameKeepsBothHalvesInTheSandbox) {
  Job("mv notes.txt moved.txt; echo new > extra.txt");
  ASSERT_EQ(Ctl({"reject", id_, "moved.txt"}).status, 0);
  Result commit = Ctl({"commit", id_, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(Exists(project_ + "/notes.txt"));
  EXPECT_FALSE(Exists(project_ + "/moved.txt"));
  EXPECT_TRUE(Exists(project_ + "/extra.txt"));
  EXPECT_EQ(Changes(), "A moved.txt (renamed from notes.txt) [rejected]\nD notes.txt (renamed to moved.txt) [rejected]\n");
}

// A decision is about the change as it was, and which rename a change is half of is part of
// it. An approved move whose new name a later job removes is a deletion nobody approved:
// `commit --all` must not delete the live file on the strength of the rename's approval.
TEST_F(RenameTest, ARenameApprovedThenBrokenUpLeavesTheDeletionPending) {
  Job("mv notes.txt moved.txt");
  ASSERT_EQ(Ctl({"approve", id_, "moved.txt"}).status, 0);
  Job("rm moved.txt");
  EXPECT_EQ(Changes(), "D notes.txt\n");
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(Exists(project_ + "/notes.txt"));
}

// And the other way: a new file rejected alone, then paired with a deletion a later job made,
// is a rename nobody decided.
TEST_F(RenameTest, AChangeDecidedAloneIsPendingOnceItIsHalfOfARename) {
  Job("cp notes.txt copy.txt");
  ASSERT_EQ(Ctl({"reject", id_, "copy.txt"}).status, 0);
  ASSERT_EQ(Ctl({"approve", id_, "--all"}).status, 0);
  Job("rm notes.txt");
  EXPECT_EQ(Changes(), "A copy.txt (renamed from notes.txt)\nD notes.txt (renamed to copy.txt)\n");
}

// A job that moved the live file and then removed its copy left overlayfs a whiteout in its
// index under the live file's handle (nfs_export does that for an unlinked copy-up); the same
// content written under a new name is a rename, and its commit moves the live file there. The
// sandbox then sees the live file under its new name, where overlayfs finds the whiteout: the
// name read as an I/O error in every job (found by the model test, seed 1795687861, with a
// symlink). With a change kept out of the commit, so that the sandbox keeps its layers; both
// for a file and for a symlink.
class RenameAfterACopyWentTest : public RenameTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(RenameAfterACopyWentTest, TheMovedLiveFileReadsInTheSandboxAfterTheCommit) {
  const std::string kind = GetParam();
  if (kind == "symlink") {
    ASSERT_EQ(World().RunAs(kAlice, {"ln", "-s", "../other.txt", "notes.txt"}, {.cwd = project_ + "/sub"}).status, 0);
    Job("mv sub/notes.txt sub/gone && rm sub/gone && ln -s ../other.txt sub/moved.txt && echo k > keep.txt");
  } else {
    Job("mv notes.txt gone && rm gone && printf 'one\\ntwo\\n' > moved.txt && echo k > keep.txt");
  }
  const std::string moved = kind == "symlink" ? "sub/moved.txt" : "moved.txt";
  const std::string from = kind == "symlink" ? "sub/notes.txt" : "notes.txt";
  ASSERT_EQ(Changes(), "A keep.txt\nA " + moved + " (renamed from " + from + ")\nD " + from + " (renamed to " + moved + ")\n");
  ASSERT_EQ(Ctl({"reject", id_, "keep.txt"}).status, 0);
  ino_t before = InodeOf(project_ + "/" + from);
  Result committed = Ctl({"commit", id_, "--all"});
  ASSERT_EQ(committed.status, 0) << committed.err;
  ASSERT_EQ(InodeOf(project_ + "/" + moved), before) << "the commit did not move the live file";
  Result seen = Ctl({"run", id_, "--", "sh", "-c", "ls -l " + moved + " >/dev/null && cat " + moved});
  EXPECT_EQ(seen.status, 0) << seen.err;
  EXPECT_EQ(seen.out, kind == "symlink" ? "keep\n" : "one\ntwo\n");
  EXPECT_EQ(Changes(), "A keep.txt [rejected]\n");
}

INSTANTIATE_TEST_SUITE_P(Kinds, RenameAfterACopyWentTest, ::testing::Values("file", "symlink"));

// The same whiteout, and the owner's own rename of the live file while the sandbox stays
// mounted: the next job reads the file under its new name (before: an I/O error until the
// sandbox was next mounted).
TEST_F(RenameTest, AFileTheOwnerRenamesLiveAfterAJobRemovedItsCopyReadsInTheNextJob) {
  Job("echo more >> notes.txt && rm notes.txt");
  ASSERT_EQ(World().RunAs(kAlice, {"mv", "notes.txt", "renamed.txt"}, {.cwd = project_}).status, 0);
  Result seen = Ctl({"run", id_, "--", "cat", "renamed.txt"});
  EXPECT_EQ(seen.status, 0) << seen.err;
  EXPECT_EQ(seen.out, "one\ntwo\n");
}

TEST_F(RenameTest, AMovedAndEditedFileIsNoRename) {
  Job("mv notes.txt moved.txt && echo three >> moved.txt");
  EXPECT_EQ(Changes(), "A moved.txt\nD notes.txt\n");
  Result diff = Ctl({"diff", id_});
  EXPECT_EQ(diff.out.find("rename from"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("deleted file mode 100644"), std::string::npos) << diff.out;
}

TEST_F(RenameTest, AFileTheOwnerCannotReadIsNeverMatched) {
  // root's secret in alice's project: alice may move it (she owns the directory) but not read
  // it, so whether her new file equals it must not show, not even as a rename.
  std::string secret = project_ + "/secret";
  { std::ofstream(secret) << "root only\n"; }
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  ASSERT_EQ(chown(secret.c_str(), 0, 0), 0);
  Job("rm -f secret; printf 'root only\\n' > guess");
  EXPECT_EQ(Changes(), "A guess\nD secret\n");
}

}  // namespace
}  // namespace sandboxd::it
