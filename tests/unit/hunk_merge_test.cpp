#include "text/hunk_merge.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "model/same_content.h"
#include "helper_clients/helper_client.h"
#include "temp_dir.h"
#include "hunk_split.h"
#include "text/diff_writer.h"
#include "text/hunk_parts.h"
#include "text/text_file.h"
#include "numbered_lines.h"

namespace sandboxd {
namespace {

using testing::ReadFile;
using testing::ScopedTempDir;
using testing::WriteFile;

using testing::Lines;

/// A 30-line file changed in three places far enough apart to give three hunks: hunk 1 turns
/// line 2 into two lines, hunk 2 inserts a line and deletes line 16, hunk 3 changes line 29.
const std::string kThreeOld = Lines(1, 30);
const std::string kThreeNew = Lines(1, 1) + "line 2 changed\nline 2b\n" + Lines(3, 14) + "inserted\n" + Lines(15, 15) +
                              Lines(17, 28) + "line 29 changed\n" + Lines(30, 30);

/// A hunk header's numbers: "@@ -old_start,old_count +new_start,new_count @@" (a count of 1 may
/// be left out, as diff does).
struct Range {
  int old_start = 0, old_count = 1, new_start = 0, new_count = 1;
};

Range ParseHeader(const std::string& header) {
  Range range;
  if (sscanf(header.c_str(), "@@ -%d,%d +%d,%d @@", &range.old_start, &range.old_count, &range.new_start, &range.new_count) == 4)
    return range;
  range = Range{};
  if (sscanf(header.c_str(), "@@ -%d +%d,%d @@", &range.old_start, &range.new_start, &range.new_count) == 3) return range;
  range = Range{};
  if (sscanf(header.c_str(), "@@ -%d,%d +%d @@", &range.old_start, &range.old_count, &range.new_start) == 3) return range;
  range = Range{};
  if (sscanf(header.c_str(), "@@ -%d +%d @@", &range.old_start, &range.new_start) == 2) return range;
  ADD_FAILURE() << "not a hunk header: " << header;
  return range;
}

/// Runs the real `diff` code (DiffChange on files in a temp dir) so that the tests compare with
/// what users see, not with hunk_merge's own view of the patch.
class HunkMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mkdir((dir_ / "lower").c_str(), 0755);
    mkdir((dir_ / "upper").c_str(), 0755);
    lower_.reset(open((dir_ / "lower").c_str(), O_PATH | O_DIRECTORY));
    upper_.reset(open((dir_ / "upper").c_str(), O_PATH | O_DIRECTORY));
  }

  std::vector<Hunk> DiffHunks(const std::string& old_text, const std::string& new_text, int context_lines = 3) {
    WriteFile(dir_ / "lower/f", old_text);
    WriteFile(dir_ / "upper/f", new_text);
    DiffOptions options;
    options.context_lines = context_lines;
    auto files = DiffChange({"f", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0644}, lower_.get(),
                            upper_.get(), options);
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? std::vector<Hunk>{} : files[0].hunks;
  }

  /// For every subset S of the hunks of old → new: diff(merged, new) is exactly the hunks not in
  /// S and diff(old, merged) exactly the hunks in S, same bodies and sizes; the side that did not
  /// change keeps its line numbers too. Applying none gives old, all gives new.
  void CheckEverySubset(const std::string& old_text, const std::string& new_text, size_t expected_hunks,
                        int context_lines = 3) {
    std::vector<Hunk> all = DiffHunks(old_text, new_text, context_lines);
    ASSERT_EQ(all.size(), expected_hunks);
    ASSERT_EQ(CountHunks(old_text, new_text, context_lines), expected_hunks);
    ASSERT_LT(expected_hunks, 10u);
    for (unsigned mask = 0; mask < (1u << expected_hunks); ++mask) {
      std::set<int> approved;
      for (size_t h = 0; h < expected_hunks; ++h)
        if (mask & (1u << h)) approved.insert(static_cast<int>(h + 1));
      SCOPED_TRACE("approved mask " + std::to_string(mask));
      std::string merged = ApplyHunks(old_text, new_text, approved, context_lines);
      if (mask == 0) {
        EXPECT_EQ(merged, old_text);
      }
      if (mask == (1u << expected_hunks) - 1) {
        EXPECT_EQ(merged, new_text);
      }

      std::vector<Hunk> left = DiffHunks(merged, new_text, context_lines);
      std::vector<Hunk> carried = DiffHunks(old_text, merged, context_lines);
      std::vector<Hunk> expected_left, expected_carried;
      for (size_t h = 0; h < all.size(); ++h) (approved.count(static_cast<int>(h + 1)) ? expected_carried : expected_left).push_back(all[h]);
      ASSERT_EQ(left.size(), expected_left.size());
      for (size_t h = 0; h < left.size(); ++h) {
        EXPECT_EQ(left[h].body, expected_left[h].body);
        Range got = ParseHeader(left[h].header), want = ParseHeader(expected_left[h].header);
        EXPECT_EQ(got.old_count, want.old_count);
        EXPECT_EQ(got.new_start, want.new_start);
        EXPECT_EQ(got.new_count, want.new_count);
      }
      ASSERT_EQ(carried.size(), expected_carried.size());
      for (size_t h = 0; h < carried.size(); ++h) {
        EXPECT_EQ(carried[h].body, expected_carried[h].body);
        Range got = ParseHeader(carried[h].header), want = ParseHeader(expected_carried[h].header);
        EXPECT_EQ(got.old_start, want.old_start);
        EXPECT_EQ(got.old_count, want.old_count);
        EXPECT_EQ(got.new_count, want.new_count);
      }
    }
  }

  ScopedTempDir dir_;
  UniqueFd lower_, upper_;
};

TEST_F(HunkMergeTest, ThreeHunksEverySubset) { CheckEverySubset(kThreeOld, kThreeNew, 3); }

TEST_F(HunkMergeTest, UntouchedHeadAndTailAreKept) {
  // Lines 1-6 and 29-40 belong to no hunk: they must come through from the old text as they are.
  std::string new_text = Lines(1, 9) + "ten\n" + Lines(11, 24) + Lines(26, 40);
  CheckEverySubset(Lines(1, 40), new_text, 2);
  EXPECT_EQ(ApplyHunks(Lines(1, 40), new_text, {1}), Lines(1, 9) + "ten\n" + Lines(11, 40));
}

TEST_F(HunkMergeTest, OnlyTheMiddleHunk) {
  EXPECT_EQ(ApplyHunks(kThreeOld, kThreeNew, {2}), Lines(1, 14) + "inserted\n" + Lines(15, 15) + Lines(17, 30));
  EXPECT_EQ(ApplyHunks(kThreeOld, kThreeNew, {1, 3}),
            Lines(1, 1) + "line 2 changed\nline 2b\n" + Lines(3, 28) + "line 29 changed\n" + Lines(30, 30));
}

TEST_F(HunkMergeTest, WhatIsLeftIsWhatDiffShowsNext) {
  // After committing hunk 2 the next diff has two hunks, the old 1 and 3, numbered 1 and 2.
  std::string merged = ApplyHunks(kThreeOld, kThreeNew, {2});
  std::vector<Hunk> before = DiffHunks(kThreeOld, kThreeNew);
  std::vector<Hunk> after = DiffHunks(merged, kThreeNew);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].body, before[0].body);
  EXPECT_EQ(after[1].body, before[2].body);
  EXPECT_EQ(ApplyHunks(merged, kThreeNew, {1, 2}), kThreeNew);
}

TEST_F(HunkMergeTest, NoTrailingNewline) {
  CheckEverySubset("one\ntwo", "one\ntwo\nthree", 1);
  CheckEverySubset("one\ntwo\n", "one\ntwo", 1);
  CheckEverySubset("one\ntwo", "one\ntwo\n", 1);
  // The last hunk touches the unterminated last line; the first is far away.
  CheckEverySubset(Lines(1, 20) + "last", "first\n" + Lines(2, 20) + "last changed", 2);
  CheckEverySubset(Lines(1, 20) + "last", "first\n" + Lines(2, 20) + "last\n", 2);
  CheckEverySubset(Lines(1, 20), "first\n" + Lines(2, 19) + "line 20", 2);
  EXPECT_EQ(ApplyHunks(Lines(1, 20) + "last", "first\n" + Lines(2, 20) + "last\n", {2}), Lines(1, 20) + "last\n");
  EXPECT_EQ(ApplyHunks(Lines(1, 20) + "last", "first\n" + Lines(2, 20) + "last\n", {1}), "first\n" + Lines(2, 20) + "last");
}

TEST_F(HunkMergeTest, AdditionsAtStartAndEnd) {
  std::string old_text = Lines(1, 10), new_text = "new first\n" + Lines(1, 10) + "new last\n";
  CheckEverySubset(old_text, new_text, 2);
  EXPECT_EQ(ApplyHunks(old_text, new_text, {1}), "new first\n" + Lines(1, 10));
  EXPECT_EQ(ApplyHunks(old_text, new_text, {2}), Lines(1, 10) + "new last\n");
  CheckEverySubset("a\nb", "a\nb\nc\n", 1);
  CheckEverySubset("", Lines(1, 3), 1);
}

TEST_F(HunkMergeTest, DeletionsOfEverythingAndAtTheEdges) {
  CheckEverySubset(Lines(1, 5), "", 1);
  CheckEverySubset("only line without newline", "", 1);
  CheckEverySubset(Lines(1, 12), Lines(2, 11), 2);
  EXPECT_EQ(ApplyHunks(Lines(1, 12), Lines(2, 11), {2}), Lines(1, 11));
}

TEST_F(HunkMergeTest, CrlfLinesStayAsTheyAre) {
  std::string old_text, new_text;
  for (int i = 1; i <= 20; ++i) {
    old_text += "row " + std::to_string(i) + "\r\n";
    new_text += i == 3 ? "row three\r\n" : i == 17 ? "row 17\n" : "row " + std::to_string(i) + "\r\n";
  }
  CheckEverySubset(old_text, new_text, 2);
  std::string only_first = ApplyHunks(old_text, new_text, {1});
  EXPECT_NE(only_first.find("row three\r\n"), std::string::npos);
  EXPECT_NE(only_first.find("row 17\r\n"), std::string::npos);
}

TEST_F(HunkMergeTest, ZeroContextLinesStillLineUp) {
  // Without context an insertion's old range is empty ("-3,0"): it names the line before it.
  CheckEverySubset(Lines(1, 6), Lines(1, 3) + "x\ny\n" + Lines(4, 5) + "z\n", 2, 0);
  CheckEverySubset(Lines(1, 6), "top\n" + Lines(1, 2) + Lines(4, 6), 2, 0);
}

TEST_F(HunkMergeTest, HunkNumbersOutOfRangeAreRefused) {
  for (int number : {0, 4, -1}) {
    try {
      ApplyHunks(kThreeOld, kThreeNew, std::set<int>{1, number});
      ADD_FAILURE() << "hunk " << number << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kNotFound);
      EXPECT_NE(std::string(e.what()).find("hunk " + std::to_string(number) + " "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("3 hunks"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ApplyHunks("same\n", "same\n", std::set<int>{1}), Error);
  EXPECT_EQ(ApplyHunks("same\n", "same\n", std::set<int>{}), "same\n");
}

// A job writes the file, so its lines may look like a diff's own: "@@" lines, "\ No newline"
// lines, lines that begin with '-', '+' or ' '. Parts are cut from the body, where each line
// carries its origin first, so such content is content: part 2 alone takes exactly its line,
// also at the end of a file without a final newline.
TEST_F(HunkMergeTest, PartsOfContentThatLooksLikeADiffAreCutByTheirOrigins) {
  const std::string old_text = "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n x\n-tail";
  const std::string new_text = "@@ -1 +1 @@\n-A\n+b\n\\ No newline at end of file\n x\n+tail";
  std::vector<int> parts = CountHunkParts(MemoryText(old_text), MemoryText(new_text));
  ASSERT_EQ(parts, (std::vector<int>{2}));  // "-a" and the last line, three lines apart
  EXPECT_EQ(ApplyHunks(old_text, new_text, HunkPick{{}, {{1, {1}}}}),
            "@@ -1 +1 @@\n-A\n+b\n\\ No newline at end of file\n x\n-tail");
  EXPECT_EQ(ApplyHunks(old_text, new_text, HunkPick{{}, {{1, {2}}}}),
            "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n x\n+tail");
  EXPECT_EQ(ApplyHunks(old_text, new_text, HunkPick{{}, {{1, {1, 2}}}}), new_text);
  // review's split of the same hunk agrees on the parts.
  auto hunks = DiffHunks(old_text, new_text);
  ASSERT_EQ(hunks.size(), 1u);
  EXPECT_EQ(api::SplitHunk(hunks[0].header + "\n" + hunks[0].body).size(), 2u);
}

TEST_F(HunkMergeTest, CountHunksAgreesWithDiff) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {kThreeOld, kThreeNew},
      {Lines(1, 100), "first\n" + Lines(2, 49) + "middle\n" + Lines(51, 99) + "last\n"},
      {Lines(1, 10), Lines(1, 4) + "changed\n" + Lines(6, 10)},
      {Lines(1, 10), Lines(1, 3) + "a\n" + Lines(5, 7) + "b\n" + Lines(9, 10)},  // close edits: one hunk
      {Lines(1, 20) + "last", "first\n" + Lines(2, 20) + "last\n"},
      {"", "x\n"},
      {"x\n", ""},
      {"same\n", "same\n"},
  };
  for (const auto& [old_text, new_text] : pairs) {
    SCOPED_TRACE(new_text.substr(0, 40));
    EXPECT_EQ(CountHunks(old_text, new_text), DiffHunks(old_text, new_text).size());
    EXPECT_EQ(CountHunks(old_text, new_text, 1), DiffHunks(old_text, new_text, 1).size());
  }
  EXPECT_EQ(CountHunks(kThreeOld, kThreeNew), 3u);
  EXPECT_EQ(CountHunks(Lines(1, 10), Lines(1, 3) + "a\n" + Lines(5, 7) + "b\n" + Lines(9, 10)), 1u);
  EXPECT_EQ(CountHunks(Lines(1, 10), Lines(1, 3) + "a\n" + Lines(5, 7) + "b\n" + Lines(9, 10), 0), 2u);
}

/// The helper's file side: reading text beneath a root, comparing entries.
class HunkMergeFilesTest : public HunkMergeTest {
 protected:
  std::string L(const std::string& p) { return dir_ / ("lower/" + p); }
  std::string U(const std::string& p) { return dir_ / ("upper/" + p); }
};

TEST_F(HunkMergeFilesTest, TextModificationFollowsTheDiffRule) {
  WriteFile(L("t"), "old\n");
  WriteFile(U("t"), "new\n");
  auto text = ReadTextModification(lower_.get(), upper_.get(), "t", 1000);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->old_text, "old\n");
  EXPECT_EQ(text->new_text, "new\n");

  std::string why;
  WriteFile(U("bin"), std::string("a\0b\n", 4));
  WriteFile(L("bin"), "a\n");
  EXPECT_FALSE(ReadTextModification(lower_.get(), upper_.get(), "bin", 1000, &why));
  EXPECT_EQ(why, "the sandbox's file is binary");
  // A NUL past git's 8000-byte probe is still text, as diff shows it.
  WriteFile(U("late-nul"), std::string(8000, 'x') + std::string(1, '\0'));
  EXPECT_TRUE(ReadTextFile(upper_.get(), "late-nul", 100000));

  WriteFile(L("big"), std::string(1001, 'x'));
  WriteFile(U("big"), "small\n");
  EXPECT_FALSE(ReadTextModification(lower_.get(), upper_.get(), "big", 1000, &why));
  EXPECT_EQ(why, "the live file is too large to be shown as text");
  EXPECT_TRUE(ReadTextModification(lower_.get(), upper_.get(), "big", 1001));

  EXPECT_FALSE(ReadTextModification(lower_.get(), upper_.get(), "missing", 1000, &why));
  EXPECT_EQ(why, "the live file is missing");

  symlink("t", L("link").c_str());
  WriteFile(U("link"), "x\n");
  EXPECT_FALSE(ReadTextModification(lower_.get(), upper_.get(), "link", 1000, &why));
  EXPECT_EQ(why, "the live file is not a regular file");

  mkfifo(U("fifo").c_str(), 0644);
  WriteFile(L("fifo"), "x\n");
  EXPECT_FALSE(ReadTextModification(lower_.get(), upper_.get(), "fifo", 1000, &why));
  EXPECT_EQ(why, "the sandbox's file is not a regular file");
}

TEST_F(HunkMergeFilesTest, TextFilesAreNeverReachedThroughSymlinks) {
  mkdir(L("real").c_str(), 0755);
  WriteFile(L("real/f"), "x\n");
  symlink("real", L("dirlink").c_str());
  symlink(dir_.path().c_str(), L("out").c_str());
  std::string why;
  EXPECT_FALSE(ReadTextFile(lower_.get(), "dirlink/f", 1000, &why));
  EXPECT_EQ(why, "is missing");
  EXPECT_TRUE(ReadTextFile(lower_.get(), "real/f", 1000));
  EXPECT_FALSE(ReadTextFile(lower_.get(), "out/lower/real/f", 1000));
  EXPECT_THROW(ReadTextFile(lower_.get(), "../lower/real/f", 1000), Error);
}

TEST_F(HunkMergeFilesTest, MayHaveHunksOnlyForFilesModifiedInPlace) {
  EXPECT_TRUE(MayHaveHunks({"f", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0755}));
  EXPECT_FALSE(MayHaveHunks({"f", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile, 0, 0644}));
  EXPECT_FALSE(MayHaveHunks({"f", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone, 0644, 0}));
  EXPECT_FALSE(MayHaveHunks({"f", ChangeKind::kModeChanged, EntryType::kFile, EntryType::kFile, 0644, 0755}));
  EXPECT_FALSE(MayHaveHunks({"f", ChangeKind::kModified, EntryType::kSymlink, EntryType::kSymlink, 0777, 0777}));
  EXPECT_FALSE(MayHaveHunks({"f", ChangeKind::kTypeChanged, EntryType::kFile, EntryType::kSymlink, 0644, 0777}));
}

TEST_F(HunkMergeFilesTest, SameContentComparesBytesAndLinkTargets) {
  WriteFile(L("same"), "abc\n", 0644);
  WriteFile(U("same"), "abc\n", 0755);  // modes do not count
  WriteFile(L("differs"), "abc\n");
  WriteFile(U("differs"), "abd\n");
  WriteFile(L("longer"), "abc\n");
  WriteFile(U("longer"), "abc\nd\n");
  symlink("target", L("ln").c_str());
  symlink("target", U("ln").c_str());
  symlink("target", L("ln2").c_str());
  symlink("other", U("ln2").c_str());
  symlink("same", L("file-vs-link").c_str());
  WriteFile(U("file-vs-link"), "abc\n");
  mkdir(L("dir").c_str(), 0755);
  mkdir(U("dir").c_str(), 0755);
  WriteFile(U("only-upper"), "abc\n");
  EXPECT_TRUE(SameContent(lower_.get(), upper_.get(), "same"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "differs"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "longer"));
  EXPECT_TRUE(SameContent(lower_.get(), upper_.get(), "ln"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "ln2"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "file-vs-link"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "dir"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "only-upper"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "nowhere"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "."));
  EXPECT_THROW(SameContent(lower_.get(), upper_.get(), "../x"), Error);
}

TEST_F(HunkMergeFilesTest, SameContentAcrossChunks) {
  // Exactly two 64 KiB chunks, and a difference in the very last byte of a longer file.
  std::string two_chunks(128 * 1024, 'q');
  WriteFile(L("two"), two_chunks);
  WriteFile(U("two"), two_chunks);
  std::string big(200 * 1024 + 7, 'z');
  WriteFile(L("big"), big);
  big.back() = 'y';
  WriteFile(U("big"), big);
  EXPECT_TRUE(SameContent(lower_.get(), upper_.get(), "two"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "big"));
}

TEST_F(HunkMergeFilesTest, SameContentNeverFollowsSymlinkedParents) {
  mkdir(L("real").c_str(), 0755);
  mkdir(U("real").c_str(), 0755);
  WriteFile(L("real/f"), "x\n");
  WriteFile(U("real/f"), "x\n");
  symlink("real", L("via").c_str());
  symlink("real", U("via").c_str());
  EXPECT_TRUE(SameContent(lower_.get(), upper_.get(), "real/f"));
  EXPECT_FALSE(SameContent(lower_.get(), upper_.get(), "via/f"));
}

/// The three helper operations end to end: the real sandboxd-helper, run through the daemon's
/// wrappers as an unprivileged user. Needs root (to drop to that user) and the built helper.
class HunkMergeHelperTest : public HunkMergeFilesTest {
 protected:
  void SetUp() override {
    HunkMergeFilesTest::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run sandboxd-helper as another user";
    // unit-tests lives in BUILD/tests/unit, the helper in BUILD/daemon.
    helper_ = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "../../daemon/sandboxd-helper";
    if (access(helper_.c_str(), X_OK) != 0) GTEST_SKIP() << "no sandboxd-helper at " << helper_;
    try {
      user_ = LookupUser(65534);
    } catch (const Error&) {
      GTEST_SKIP() << "no user 65534 (nobody) to run sandboxd-helper as";
    }
    chmod(dir_.path().c_str(), 0755);
  }
  UniqueFd MakeOutput(const std::string& name) {
    return UniqueFd(open((dir_ / name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  }
  std::string helper_;
  std::optional<HelperPrograms> programs_;
  HelperPrograms& Programs() {
    if (!programs_) programs_.emplace(helper_);
    return *programs_;
  }
  UserCredentials user_;
};

TEST_F(HunkMergeHelperTest, HunksCountsTextModificationsOnly) {
  WriteFile(L("three.txt"), kThreeOld);
  WriteFile(U("three.txt"), kThreeNew);
  WriteFile(L("bin"), "a\n");
  WriteFile(U("bin"), std::string("a\0b", 3));
  WriteFile(U("added.txt"), "new\n");
  WriteFile(L("mode.sh"), "x\n", 0644);
  WriteFile(U("mode.sh"), "x\n", 0755);
  HelperRoot root{lower_.get(), upper_.get(), "", {}, {}, {}};
  root.changes = {{"three.txt", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0644},
                  {"bin", ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0644},
                  {"added.txt", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile, 0, 0644},
                  {"mode.sh", ChangeKind::kModeChanged, EntryType::kFile, EntryType::kFile, 0644, 0755}};
  HelperRoot second{lower_.get(), upper_.get(), "1/", {root.changes[0]}, {}, {}};
  auto counts = CountHunksAsOwner(Programs(), user_, {root, second});
  ASSERT_EQ(counts.size(), 2u);
  auto hunks_of = [](const std::map<std::string, HunkShape>& shapes) {
    std::map<std::string, int> hunks;
    for (const auto& [path, shape] : shapes) hunks[path] = shape.hunks;
    return hunks;
  };
  EXPECT_EQ(hunks_of(counts[0]), (std::map<std::string, int>{{"three.txt", 3}, {"bin", -1}, {"added.txt", -1}, {"mode.sh", -1}}));
  EXPECT_EQ(hunks_of(counts[1]), (std::map<std::string, int>{{"three.txt", 3}}));
  EXPECT_TRUE(counts[0].at("three.txt").parts.empty());  // not asked for
  auto with_parts = CountHunksAsOwner(Programs(), user_, {root}, true);
  EXPECT_EQ(with_parts[0].at("three.txt").parts, (std::vector<int>{1, 2, 1}));  // hunk 2: an insertion, line 15, a deletion
}

TEST_F(HunkMergeHelperTest, MergeWritesTheApprovedHunks) {
  mkdir(L("d").c_str(), 0755);
  mkdir(U("d").c_str(), 0755);
  WriteFile(L("d/three.txt"), kThreeOld);
  WriteFile(U("d/three.txt"), kThreeNew);
  UniqueFd out = MakeOutput("merged");
  MergeHunksAsOwner(Programs(), user_, lower_.get(), upper_.get(), "d/three.txt", HunkPick{{2}}, out.get());
  EXPECT_EQ(ReadFile(dir_ / "merged"), ApplyHunks(kThreeOld, kThreeNew, {2}));

  UniqueFd out2 = MakeOutput("merged2");
  try {
    MergeHunksAsOwner(Programs(), user_, lower_.get(), upper_.get(), "d/three.txt", HunkPick{{4}}, out2.get());
    ADD_FAILURE() << "hunk 4 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_EQ(std::string(e.what()), "d/three.txt: hunk 4 does not exist: the change has 3 hunks");
  }
  EXPECT_EQ(ReadFile(dir_ / "merged2"), "");
}

TEST_F(HunkMergeHelperTest, MergeRefusesWhatIsNotATextModification) {
  WriteFile(L("bin"), "a\n");
  WriteFile(U("bin"), std::string("a\0b", 3));
  mkdir(L("real").c_str(), 0755);
  WriteFile(L("real/f"), "a\n");
  symlink("real", L("via").c_str());
  mkdir(U("via").c_str(), 0755);
  WriteFile(U("via/f"), "b\n");
  for (const char* path : {"bin", "via/f", "missing"}) {
    UniqueFd out = MakeOutput(std::string("out-") + (path[0] == 'v' ? "via" : path));
    try {
      MergeHunksAsOwner(Programs(), user_, lower_.get(), upper_.get(), path, HunkPick{{1}}, out.get());
      ADD_FAILURE() << path << " was merged";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST_F(HunkMergeHelperTest, CompareAnswersTheIdenticalPaths) {
  WriteFile(L("same"), "abc\n");
  WriteFile(U("same"), "abc\n");
  WriteFile(L("differs"), "abc\n");
  WriteFile(U("differs"), "abd\n");
  symlink("t", L("ln").c_str());
  symlink("t", U("ln").c_str());
  EXPECT_EQ(SameContentAsOwner(Programs(), user_, lower_.get(), upper_.get(), {"same", "differs", "ln", "missing"}),
            (std::set<std::string>{"same", "ln"}));
  EXPECT_EQ(SameContentAsOwner(Programs(), user_, lower_.get(), upper_.get(), {}), std::set<std::string>{});
}

}  // namespace
}  // namespace sandboxd
