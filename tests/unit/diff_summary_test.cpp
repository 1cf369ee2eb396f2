// diff --stat and --name-only (client/diff_summary.h) from the diff sandboxd writes.
#include "diff_summary.h"

#include <gtest/gtest.h>

namespace sandboxctl {
namespace {

constexpr const char* kDiff =
    "diff --git a/a.txt b/a.txt\n"
    "index 1111111..2222222 100644\n"
    "--- a/a.txt\n"
    "+++ b/a.txt\n"
    "@@ -1,3 +1,3 @@\n"
    " one\n"
    "-two\n"
    "+TWO\n"
    "+2b\n"
    "--- not a header, a removed line\n"
    "diff --git a/new.txt b/new.txt\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/new.txt\n"
    "@@ -0,0 +1 @@\n"
    "+made\n"
    "diff --git a/gone.txt b/gone.txt\n"
    "deleted file mode 100644\n"
    "--- a/gone.txt\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-was\n"
    "diff --git a/old.c b/new.c\n"
    "similarity index 100%\n"
    "rename from old.c\n"
    "rename to new.c\n"
    "diff --git a/bin b/bin\n"
    "Binary files a/bin and b/bin differ\n"
    "diff --git a/dir b/dir\n"
    "old mode 40755\n"
    "new mode 40700\n";

TEST(DiffSummaryTest, StatCountsEachFilesLinesAsGitDoes) {
  DiffSummary summary;
  std::string diff = kDiff;
  // In pieces that cut lines anywhere.
  for (size_t at = 0; at < diff.size(); at += 7) summary.Add(std::string_view(diff).substr(at, 7));
  EXPECT_EQ(summary.Stat(),
            " a.txt          |   4 ++--\n"
            " new.txt        |   1 +\n"
            " gone.txt       |   1 -\n"
            " old.c => new.c |   0\n"
            " bin            | Bin\n"
            " dir            |   0\n"
            " 6 files changed, 3 insertions(+), 3 deletions(-)\n");
}

TEST(DiffSummaryTest, NameOnlyListsTheNewNames) {
  DiffSummary summary;
  summary.Add(kDiff);
  EXPECT_EQ(summary.NameOnly(), "a.txt\nnew.txt\ngone.txt\nnew.c\nbin\ndir\n");
}

TEST(DiffSummaryTest, WideChangesAreScaledAndEmptyDiffsSayNothing) {
  DiffSummary summary;
  std::string diff = "diff --git a/big b/big\n--- a/big\n+++ b/big\n@@ -1,100 +1,300 @@\n";
  for (int i = 0; i < 300; ++i) diff += "+x\n";
  for (int i = 0; i < 100; ++i) diff += "-y\n";
  summary.Add(diff);
  std::string stat = summary.Stat(40);
  EXPECT_EQ(stat.substr(0, 12), " big | 400 +");
  EXPECT_LE(stat.find('\n'), 40u) << stat;
  EXPECT_NE(stat.find(" 1 file changed, 300 insertions(+), 100 deletions(-)\n"), std::string::npos) << stat;
  EXPECT_EQ(DiffSummary().Stat(), "");
}

}  // namespace
}  // namespace sandboxctl
