// sandboxctl's cutting of a diff into file sections and hunks, the numbering that `review`
// sends back as PATH:N, and which sections of a directory's diff belong to it.

#include "diff_split.h"

#include <gtest/gtest.h>

namespace sandboxctl {
namespace {

constexpr const char* kThreeHunks =
    "diff --git a/three.txt b/three.txt\n"
    "--- a/three.txt\n"
    "+++ b/three.txt\n"
    "@@ -1,5 +1,5 @@\n"
    " line 1\n"
    "-line 2\n"
    "+two\n"
    "@@ -12,7 +12,7 @@ line 11\n"
    "-line 15\n"
    "+fifteen\n"
    "@@ -25,6 +25,6 @@ line 24\n"
    "-line 28\n"
    "+twenty-eight\n"
    "\\ No newline at end of file\n";

TEST(DiffSplit, CutsAFileIntoItsHeaderAndNumberedHunks) {
  auto sections = SplitDiff(kThreeHunks);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].path, "three.txt");
  EXPECT_EQ(sections[0].header, "diff --git a/three.txt b/three.txt\n--- a/three.txt\n+++ b/three.txt\n");
  ASSERT_EQ(sections[0].hunks.size(), 3u);
  EXPECT_EQ(sections[0].hunks[0], "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n");
  EXPECT_EQ(sections[0].hunks[1], "@@ -12,7 +12,7 @@ line 11\n-line 15\n+fifteen\n");
  EXPECT_EQ(sections[0].hunks[2], "@@ -25,6 +25,6 @@ line 24\n-line 28\n+twenty-eight\n\\ No newline at end of file\n");
  std::string joined = sections[0].header;
  for (const auto& hunk : sections[0].hunks) joined += hunk;
  EXPECT_EQ(joined, kThreeHunks) << "nothing is lost or added";
}

TEST(DiffSplit, ContentThatLooksLikeMarkersStaysContent) {
  // Added lines that read "diff --git ..." and "@@ ..." carry their '+': they are not markers.
  auto sections = SplitDiff(
      "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1,2 @@\n x\n+diff --git a/b b/b\n+@@ -1 +1 @@\n");
  ASSERT_EQ(sections.size(), 1u);
  ASSERT_EQ(sections[0].hunks.size(), 1u);
  EXPECT_EQ(sections[0].hunks[0], "@@ -1 +1,2 @@\n x\n+diff --git a/b b/b\n+@@ -1 +1 @@\n");
}

TEST(DiffSplit, FilesWithoutHunksAreAllHeader) {
  auto sections = SplitDiff(
      "diff --git a/bin b/bin\nBinary files a/bin and b/bin differ\n"
      "diff --git a/d/fifo b/d/fifo\nnew file mode 010644\n"
      "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n");
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_EQ(sections[0].path, "bin");
  EXPECT_EQ(sections[0].header, "diff --git a/bin b/bin\nBinary files a/bin and b/bin differ\n");
  EXPECT_EQ(sections[1].path, "d/fifo");
  EXPECT_EQ(sections[2].header, "diff --git a/x b/x\nold mode 100644\nnew mode 100755\n");
  for (const auto& section : sections) EXPECT_TRUE(section.hunks.empty()) << section.path;
}

TEST(DiffSplit, NothingGivesNoSectionsAndALastLineNeedsNoNewline) {
  EXPECT_TRUE(SplitDiff("").empty());
  EXPECT_TRUE(SplitDiff("stray text\n").empty());
  auto sections = SplitDiff("diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new");
  ASSERT_EQ(sections.size(), 1u);
  ASSERT_EQ(sections[0].hunks.size(), 1u);
  EXPECT_EQ(sections[0].hunks[0], "@@ -0,0 +1 @@\n+new");
}

TEST(DiffSplit, ReadsPathsWithSpacesAndRefusesOtherLines) {
  EXPECT_EQ(DiffGitPath("diff --git a/my file b/my file"), "my file");
  EXPECT_EQ(DiffGitPath("diff --git a/a b/c b/a b/c"), "a b/c");
  EXPECT_EQ(DiffGitPath("diff --git a/1/src/x.c b/1/src/x.c"), "1/src/x.c");
  EXPECT_EQ(DiffGitPath("diff --git a/one b/two"), std::nullopt);
  EXPECT_EQ(DiffGitPath("--- a/x"), std::nullopt);
  EXPECT_EQ(DiffGitPath("diff --git a/ b/"), std::nullopt);
}

std::vector<FileSection> Sections(const std::vector<std::string>& paths) {
  std::vector<FileSection> sections;
  for (const auto& path : paths) sections.push_back({path, "diff --git a/" + path + " b/" + path + "\n", {}});
  return sections;
}

std::vector<std::string> PathsOf(const std::vector<FileSection>& sections) {
  std::vector<std::string> paths;
  for (const auto& section : sections) paths.push_back(section.path);
  return paths;
}

TEST(DiffSplit, ADirectorysDiffLeavesOutTheChangesBeneathIt) {
  // "sub" changed mode; sub/s.txt and sub/deeper/x changed on their own; sub-x is no child.
  std::vector<std::string> changes = {"sub", "sub-x", "sub/deeper/x", "sub/s.txt"};
  auto diff = Sections({"sub", "sub/deeper/x", "sub/s.txt"});
  EXPECT_EQ(PathsOf(SectionsOfChange(diff, "sub", changes)), (std::vector<std::string>{"sub"}));
  EXPECT_EQ(PathsOf(SectionsOfChange(diff, "sub/s.txt", changes)), (std::vector<std::string>{"sub/s.txt"}));
}

TEST(DiffSplit, ADeletedDirectoryOwnsTheFilesItHeld) {
  std::vector<std::string> changes = {"a.txt", "old", "old2"};
  auto diff = Sections({"old/f", "old/g/h"});
  EXPECT_EQ(PathsOf(SectionsOfChange(diff, "old", changes)), (std::vector<std::string>{"old/f", "old/g/h"}));
}

TEST(DiffSplit, TheRootIsAboveEveryPath) {
  std::vector<std::string> changes = {".", "a.txt", "d/x"};
  auto diff = Sections({".", "a.txt", "d/x"});
  EXPECT_EQ(PathsOf(SectionsOfChange(diff, ".", changes)), (std::vector<std::string>{"."}));
  // Roots of a multi-root sandbox are "0", "1": their own directories, not ".".
  std::vector<std::string> roots = {"1", "1/y"};
  EXPECT_EQ(PathsOf(SectionsOfChange(Sections({"1", "1/y", "1/z"}), "1", roots)), (std::vector<std::string>{"1", "1/z"}));
}

TEST(DiffSplit, ASectionWhosePathCannotBeReadStaysWithTheChange) {
  std::vector<FileSection> diff = {{"", "diff --git a/odd b/other\n", {}}};
  EXPECT_EQ(SectionsOfChange(diff, "odd", {"odd", "x"}).size(), 1u);
}

}  // namespace
}  // namespace sandboxctl
