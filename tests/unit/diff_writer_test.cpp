#include "base/errors.h"
#include "text/diff_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <memory>
#include <set>

#include "unique_fd.h"
#include "hunk_split.h"
#include "git_diff.h"
#include "temp_dir.h"
#include "numbered_lines.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::WriteFile;

using testing::Lines;

std::string GitDiff(const std::string& old_path, const std::string& new_path, const std::string& shown) {
  return testing::GitDiffNoIndex(old_path, new_path, shown);
}

class DiffWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mkdir((dir_ / "lower").c_str(), 0755);
    mkdir((dir_ / "upper").c_str(), 0755);
    lower_.reset(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
    upper_.reset(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
  }
  std::string L(const std::string& p) { return dir_ / ("lower/" + p); }
  std::string U(const std::string& p) { return dir_ / ("upper/" + p); }
  std::string Diff(const Change& change, const std::string& prefix = "") {
    DiffOptions options;
    options.path_prefix = prefix;
    std::string text;
    for (const auto& file : DiffChange(change, lower_.get(), upper_.get(), options)) text += file.Text();
    return text;
  }
  ScopedTempDir dir_;
  UniqueFd lower_, upper_;
};

Change Of(const std::string& path, ChangeKind kind, EntryType old_type, EntryType new_type) {
  return {path, kind, old_type, new_type, 0644, 0644};
}

TEST_F(DiffWriterTest, ModifiedMatchesGit) {
  WriteFile(L("f.txt"), Lines(1, 10));
  WriteFile(U("f.txt"), Lines(1, 4) + "changed\n" + Lines(6, 10) + "added\n");
  EXPECT_EQ(Diff(Of("f.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile)),
            GitDiff(L("f.txt"), U("f.txt"), "f.txt"));
}

TEST_F(DiffWriterTest, AddedAndDeletedMatchGit) {
  WriteFile(U("new.txt"), "a\nb\n");
  WriteFile(L("old.txt"), "x\ny\n");
  EXPECT_EQ(Diff(Of("new.txt", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile)),
            "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n");
  EXPECT_EQ(Diff(Of("old.txt", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone)),
            "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n");
}

TEST_F(DiffWriterTest, EmptyNewFileHasOnlyItsHeader) {
  WriteFile(U("empty"), "");
  EXPECT_EQ(Diff(Of("empty", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile)),
            "diff --git a/empty b/empty\nnew file mode 100644\n");
}

TEST_F(DiffWriterTest, NoNewlineAtEndMatchesGit) {
  WriteFile(L("n.txt"), "one\ntwo");
  WriteFile(U("n.txt"), "one\ntwo\nthree");
  EXPECT_EQ(Diff(Of("n.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile)),
            GitDiff(L("n.txt"), U("n.txt"), "n.txt"));
  EXPECT_NE(Diff(Of("n.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile)).find("\\ No newline at end of file\n"),
            std::string::npos);
}

TEST_F(DiffWriterTest, ThreeSeparateEditsGiveThreeNumberedHunks) {
  WriteFile(L("h.txt"), Lines(1, 100));
  WriteFile(U("h.txt"), "first\n" + Lines(2, 49) + "middle\n" + Lines(51, 99) + "last\n");
  DiffOptions options;
  auto files = DiffChange(Of("h.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile), lower_.get(), upper_.get(), options);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_EQ(files[0].hunks.size(), 3u);
  EXPECT_EQ(files[0].hunks[0].header, "@@ -1,4 +1,4 @@");
  EXPECT_NE(files[0].hunks[1].body.find("+middle\n"), std::string::npos);
  EXPECT_NE(files[0].hunks[2].body.find("+last\n"), std::string::npos);
  EXPECT_EQ(files[0].Text(), GitDiff(L("h.txt"), U("h.txt"), "h.txt"));
}

TEST_F(DiffWriterTest, BinaryFiles) {
  WriteFile(L("b.bin"), std::string("a\0b", 3));
  WriteFile(U("b.bin"), std::string("a\0c", 3));
  // With git's index line: without it git does not take the header for a patch (issue 39).
  EXPECT_EQ(Diff(Of("b.bin", ChangeKind::kModified, EntryType::kFile, EntryType::kFile)),
            "diff --git a/b.bin b/b.bin\nindex 20b5be9..88f3700 100644\nBinary files a/b.bin and b/b.bin differ\n");
  EXPECT_EQ(Diff(Of("b.bin", ChangeKind::kModified, EntryType::kFile, EntryType::kFile)),
            testing::GitDiffAsShown(L("b.bin"), U("b.bin"), "b.bin"));
}

TEST_F(DiffWriterTest, ModeChangeWithAndWithoutContent) {
  WriteFile(L("s.sh"), "echo\n", 0644);
  WriteFile(U("s.sh"), "echo\n", 04755);
  EXPECT_EQ(Diff({"s.sh", ChangeKind::kModeChanged, EntryType::kFile, EntryType::kFile, 0644, 04755}),
            "diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 104755\n");
  WriteFile(U("s.sh"), "echo hi\n", 0755);
  EXPECT_EQ(Diff({"s.sh", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0755}),
            "diff --git a/s.sh b/s.sh\nold mode 100644\nnew mode 100755\n--- a/s.sh\n+++ b/s.sh\n@@ -1 +1 @@\n-echo\n+echo hi\n");
  mkdir(L("d").c_str(), 0755);
  mkdir(U("d").c_str(), 0700);
  EXPECT_EQ(Diff({"d", ChangeKind::kModeChanged, EntryType::kDirectory, EntryType::kDirectory, 0755, 0700}),
            "diff --git a/d b/d\nold mode 040755\nnew mode 040700\n");
}

TEST_F(DiffWriterTest, SymlinksAsGitShowsThem) {
  symlink("old-target", L("l").c_str());
  symlink("new-target", U("l").c_str());
  EXPECT_EQ(Diff(Of("l", ChangeKind::kModified, EntryType::kSymlink, EntryType::kSymlink)),
            "diff --git a/l b/l\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-old-target\n\\ No newline at end of file\n"
            "+new-target\n\\ No newline at end of file\n");
}

TEST_F(DiffWriterTest, TypeChangeIsDeletionThenAddition) {
  WriteFile(L("t"), "file\n");
  symlink("target", U("t").c_str());
  EXPECT_EQ(Diff(Of("t", ChangeKind::kTypeChanged, EntryType::kFile, EntryType::kSymlink)),
            "diff --git a/t b/t\ndeleted file mode 100644\n--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-file\n"
            "diff --git a/t b/t\nnew file mode 120000\n--- /dev/null\n+++ b/t\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n");
}

TEST_F(DiffWriterTest, DeletedDirectoryListsEveryFileWithPrefix) {
  mkdir(L("dir").c_str(), 0755);
  mkdir(L("dir/sub").c_str(), 0755);
  WriteFile(L("dir/b"), "b\n");
  WriteFile(L("dir/sub/a"), "a\n");
  std::string diff = Diff(Of("dir", ChangeKind::kDeleted, EntryType::kDirectory, EntryType::kNone), "1/");
  EXPECT_EQ(diff,
            "diff --git a/1/dir/b b/1/dir/b\ndeleted file mode 100644\n--- a/1/dir/b\n+++ /dev/null\n@@ -1 +0,0 @@\n-b\n"
            "diff --git a/1/dir/sub/a b/1/dir/sub/a\ndeleted file mode 100644\n--- a/1/dir/sub/a\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n");
}

TEST_F(DiffWriterTest, AddedDirectoryAndFifo) {
  mkdir(U("nd").c_str(), 0755);
  mkfifo(U("p").c_str(), 0644);
  EXPECT_EQ(Diff(Of("nd", ChangeKind::kAdded, EntryType::kNone, EntryType::kDirectory)), "");
  EXPECT_EQ(Diff(Of("p", ChangeKind::kAdded, EntryType::kNone, EntryType::kFifo)), "diff --git a/p b/p\nnew file mode 010644\n");
}

TEST_F(DiffWriterTest, LargeFilesAreBinaryAndNotReadWhole) {
  WriteFile(U("big"), std::string(2000, 'x'));
  DiffOptions options;
  options.max_text_bytes = 1000;
  auto files = DiffChange(Of("big", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile), lower_.get(), upper_.get(), options);
  ASSERT_EQ(files.size(), 1u);
  // Binary by its size alone, yet named by its blob id (git hash-object), read a piece at a time.
  EXPECT_EQ(files[0].Text(), "diff --git a/big b/big\nnew file mode 100644\nindex 0000000..24c7b14\nBinary files /dev/null and b/big differ\n");
}

TEST_F(DiffWriterTest, ClosedReaderStopsQuietly) {
  signal(SIGPIPE, SIG_IGN);
  WriteFile(U("f"), Lines(1, 5000));
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  DiffOptions options;
  EXPECT_FALSE(WriteDiff({Of("f", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile)}, lower_.get(), upper_.get(), options, fds[1]));
  close(fds[1]);
}

// A reader that keeps the pipe open and reads nothing: with a stall limit the writer gives up
// after it, naming the setting; a reader that takes everything is never cut short.
TEST_F(DiffWriterTest, AReaderThatStopsReadingEndsTheDiffAfterTheStallLimit) {
  WriteFile(U("f"), Lines(1, 50000));  // far more than a pipe holds
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  DiffOptions options;
  options.output_stall_ms = 200;
  auto started = std::chrono::steady_clock::now();
  try {
    WriteDiff({Of("f", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile)}, lower_.get(), upper_.get(), options, fds[1]);
    ADD_FAILURE() << "the diff into a pipe nobody reads ended without an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("StalledReaderTimeout"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  close(fds[0]);
  close(fds[1]);

  // A file takes it all.
  std::string out = dir_ / "out";
  UniqueFd file(open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  EXPECT_TRUE(WriteDiff({Of("f", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile)}, lower_.get(), upper_.get(), options, file.get()));
  EXPECT_GT(testing::ReadFile(out).size(), 50000u * 5);
}

TEST_F(DiffWriterTest, RenameIsAHeaderWithoutHunks) {
  WriteFile(L("old.txt"), Lines(1, 5));
  mkdir(U("sub").c_str(), 0755);
  WriteFile(U("sub/new.txt"), Lines(1, 5));
  FileDiff diff = DiffRename({"old.txt", "sub/new.txt"}, lower_.get(), upper_.get(), DiffOptions{});
  EXPECT_EQ(diff.header,
            "diff --git a/old.txt b/sub/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to sub/new.txt\n");
  EXPECT_TRUE(diff.hunks.empty());
  EXPECT_EQ(diff.Text(), diff.header);
}

TEST_F(DiffWriterTest, RenameWithANewModeShowsBothModesFirst) {
  WriteFile(L("run.sh"), "echo\n", 0644);
  WriteFile(U("run-it.sh"), "echo\n", 0755);
  EXPECT_EQ(DiffRename({"run.sh", "run-it.sh"}, lower_.get(), upper_.get(), DiffOptions{}).Text(),
            "diff --git a/run.sh b/run-it.sh\nold mode 100644\nnew mode 100755\n"
            "similarity index 100%\nrename from run.sh\nrename to run-it.sh\n");
}

TEST_F(DiffWriterTest, WriteDiffShowsARenameOnceWhereItsAddedHalfIsWithThePrefix) {
  WriteFile(U("a.txt"), "added\n");
  WriteFile(U("new.txt"), "moved\n");
  WriteFile(L("old.txt"), "moved\n");
  WriteFile(L("z.txt"), "deleted\n");
  // In scan order; old.txt is the rename's deleted half, z.txt a deletion of its own.
  std::vector<Change> changes = {Of("a.txt", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile),
                                 Of("new.txt", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile),
                                 Of("old.txt", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone),
                                 Of("z.txt", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone)};
  DiffOptions options;
  options.path_prefix = "1/";
  UniqueFd out(open((dir_ / "out").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(out);
  ASSERT_TRUE(WriteDiff(changes, lower_.get(), upper_.get(), options, out.get(), {{"old.txt", "new.txt"}}));
  EXPECT_EQ(testing::ReadFile(dir_ / "out"),
            Diff(changes[0], "1/") +
                "diff --git a/1/old.txt b/1/new.txt\nsimilarity index 100%\nrename from 1/old.txt\nrename to 1/new.txt\n" +
                Diff(changes[3], "1/"));
  EXPECT_NE(Diff(changes[3], "1/").find("-deleted\n"), std::string::npos);  // the deletion is really there
}

// `diff PATH:N.M`: the file's header and part M of hunk N as review's `s` shows it, next to
// other hunks asked for whole; a part the hunk does not have is refused before anything is
// written, naming it.
TEST_F(DiffWriterTest, APartOfAHunkIsShownAsItsSplitShowsIt) {
  WriteFile(L("p.txt"), Lines(1, 60));
  WriteFile(U("p.txt"), Lines(1, 1) + "two\n" + Lines(3, 5) + "six\n" + Lines(7, 49) + "fifty\n" + Lines(51, 60));
  Change change = Of("p.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile);
  auto files = DiffChange(change, lower_.get(), upper_.get(), DiffOptions{});
  ASSERT_EQ(files.at(0).hunks.size(), 2u);
  auto parts = api::SplitHunk(files[0].hunks[0].header + "\n" + files[0].hunks[0].body);
  ASSERT_EQ(parts.size(), 2u);
  DiffOptions options;
  options.only_hunks["p.txt"] = {{1, 2}, {2, 0}};
  UniqueFd out(open((dir_ / "out").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(WriteDiff({change}, lower_.get(), upper_.get(), options, out.get()));
  EXPECT_EQ(testing::ReadFile(dir_ / "out"),
            files[0].header + parts[1] + files[0].hunks[1].header + "\n" + files[0].hunks[1].body);
  EXPECT_NE(parts[1].find("+six\n"), std::string::npos);
  EXPECT_EQ(parts[1].find("two"), std::string::npos);

  options.only_hunks["p.txt"] = {{1, 3}};
  UniqueFd refused(open((dir_ / "refused").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  try {
    WriteDiff({change}, lower_.get(), upper_.get(), options, refused.get());
    ADD_FAILURE() << "part 1.3 was shown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_EQ(std::string(e.what()), "no hunk p.txt:1.3 (hunk 1 of p.txt has 2 parts)");
  }
  EXPECT_EQ(testing::ReadFile(dir_ / "refused"), "");
}

// Parts 1 and 2 of a hunk asked for together are shown as one hunk, which git apply takes
// (hunk_split.h, AskedParts).
TEST_F(DiffWriterTest, NeighbouringPartsAskedTogetherAreOneHunk) {
  WriteFile(L("p.txt"), Lines(1, 60));
  WriteFile(U("p.txt"), Lines(1, 1) + "two\n" + Lines(3, 5) + "six\n" + Lines(7, 60));
  Change change = Of("p.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile);
  auto files = DiffChange(change, lower_.get(), upper_.get(), DiffOptions{});
  ASSERT_EQ(files.at(0).hunks.size(), 1u);
  DiffOptions options;
  options.only_hunks["p.txt"] = {{1, 1}, {1, 2}};
  UniqueFd out(open((dir_ / "out").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  ASSERT_TRUE(WriteDiff({change}, lower_.get(), upper_.get(), options, out.get()));
  EXPECT_EQ(testing::ReadFile(dir_ / "out"), files[0].header + "@@ -1,9 +1,9 @@\n" + files[0].hunks[0].body);
}

// A text modification with a new mode, shown by some of its hunks: a commit of them keeps the
// live mode (a mode change is no hunk), so the diff of them shows no mode change; shown by all
// of them (whole or in all of their parts), which decided alike decide the whole change, mode
// included, it shows the mode change. Found by the display-equals-commit property: `git apply`
// of the diff of an approved hunk made the copy's file executable, the commit did not.
TEST_F(DiffWriterTest, SomeHunksOfAFileWithANewModeShowNoModeChange) {
  WriteFile(L("p.txt"), Lines(1, 60));
  WriteFile(U("p.txt"), Lines(1, 1) + "two\n" + Lines(3, 5) + "six\n" + Lines(7, 49) + "fifty\n" + Lines(51, 60));
  ASSERT_EQ(chmod(U("p.txt").c_str(), 0755), 0);
  Change change = Of("p.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile);
  auto files = DiffChange(change, lower_.get(), upper_.get(), DiffOptions{});
  ASSERT_EQ(files.at(0).hunks.size(), 2u);
  const std::string mode_lines = "old mode 100644\nnew mode 100755\n";
  ASSERT_NE(files[0].header.find(mode_lines), std::string::npos) << files[0].header;
  auto shown = [&](std::set<api::HunkRef> asked) {
    DiffOptions options;
    options.only_hunks["p.txt"] = std::move(asked);
    UniqueFd out(open((dir_ / "out").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    EXPECT_TRUE(WriteDiff({change}, lower_.get(), upper_.get(), options, out.get()));
    return testing::ReadFile(dir_ / "out");
  };
  std::string without_mode = files[0].header;
  without_mode.erase(without_mode.find(mode_lines), mode_lines.size());
  auto hunk = [&](size_t i) { return files[0].hunks[i].header + "\n" + files[0].hunks[i].body; };
  EXPECT_EQ(shown({{2, 0}}), without_mode + hunk(1));
  EXPECT_EQ(shown({{1, 1}, {2, 0}}), without_mode + api::SplitHunk(hunk(0))[0] + hunk(1));
  EXPECT_EQ(shown({{1, 0}, {2, 0}}), files[0].Text());
  EXPECT_EQ(shown({{1, 1}, {1, 2}, {2, 0}}), files[0].header + "@@ -1,9 +1,9 @@\n" + files[0].hunks[0].body + hunk(1));
}

}  // namespace
}  // namespace sandboxd
