// What the review app shows is what sandboxctl prints, and a name or a line a job chose cannot
// steer how it is shown: no control byte reaches the screen as itself, no text becomes markup.

#include <gtest/gtest.h>

#include "listed_change.h"
#include "review/review_text.h"

namespace sandboxd_review {
namespace {

sandboxctl::ListedChange Change(std::string path, std::string kind, std::string review = "pending") {
  sandboxctl::ListedChange change;
  change.path = std::move(path);
  change.kind = std::move(kind);
  change.review = std::move(review);
  return change;
}

TEST(ReviewTextTest, ARowSaysWhatSandboxctlChangesSays) {
  auto change = Change("src/run.sh", "modified", "approved");
  change.old_size = 900;
  change.new_size = 1234;
  EXPECT_EQ(ChangeRowText(change), "M src/run.sh  900 B -> 1.2 KiB [approved]");
  auto conflict = Change("a.txt", "added");
  conflict.conflict = true;
  conflict.conflict_reason = "the live file changed since the sandbox was made";
  EXPECT_EQ(ChangeRowText(conflict), "A a.txt [conflict: the live file changed since the sandbox was made]");
}

TEST(ReviewTextTest, ANameWithControlBytesIsShownQuotedAsGitQuotesIt) {
  // A wire name that is not UTF-8-clean text comes quoted; one with a newline too.
  const std::string row = ChangeRowText(Change("\"evil\\nname\"", "added"));
  EXPECT_EQ(row, "A \"evil\\nname\"");
  EXPECT_EQ(row.find('\n'), std::string::npos);
}

TEST(ReviewTextTest, ALineOfContentCannotBecomeMarkupOrHideBytes) {
  const std::string markup = DiffLineMarkup("+<b>bold</b> & \x1b[2Jcleared\r\x01&#x1;");
  EXPECT_EQ(markup.find("<b>"), std::string::npos) << markup;
  EXPECT_NE(markup.find("&lt;b&gt;bold&lt;/b&gt; &amp; "), std::string::npos) << markup;
  // ESC, CR and ^A are written visibly and marked; none of them is left as itself.
  for (char c : {'\x1b', '\r', '\x01', '\x02'}) EXPECT_EQ(markup.find(c), std::string::npos) << markup;
  EXPECT_NE(markup.find(">^[</span>"), std::string::npos) << markup;
  EXPECT_NE(markup.find(">^M</span>"), std::string::npos) << markup;
  EXPECT_NE(markup.find(">^A</span>"), std::string::npos) << markup;
  // The text "&#x1;" in the file is the text, not a mark.
  EXPECT_NE(markup.find("&amp;#x1;"), std::string::npos) << markup;
}

TEST(ReviewTextTest, ANulDoesNotEndTheLineShown) {
  const std::string markup = DiffLineMarkup(std::string("+ok\0hidden", 10));
  EXPECT_NE(markup.find("ok"), std::string::npos);
  EXPECT_NE(markup.find("^@"), std::string::npos) << markup;
  EXPECT_NE(markup.find("hidden"), std::string::npos) << markup;
}

TEST(ReviewTextTest, LinesAreColouredByWhatTheyDo) {
  EXPECT_EQ(DiffLineMarkup("+x"), "<span foreground=\"#26a269\">+x</span>");
  EXPECT_EQ(DiffLineMarkup("-x"), "<span foreground=\"#c01c28\">-x</span>");
  EXPECT_EQ(DiffLineMarkup(" x"), " x");
}

TEST(ReviewTextTest, ACommitTakesApprovedChangesAndHunksOnly) {
  EXPECT_TRUE(TakenByCommit(Change("a", "added", "approved")));
  EXPECT_FALSE(TakenByCommit(Change("a", "added", "pending")));
  EXPECT_FALSE(TakenByCommit(Change("a", "added", "rejected")));
  auto partial = Change("a", "modified", "partial");
  partial.rejected_hunks = {1, 2};
  EXPECT_FALSE(TakenByCommit(partial)) << "every hunk rejected: nothing of it lands";
  partial.approved_hunks = {3};
  EXPECT_TRUE(TakenByCommit(partial));
}

TEST(ReviewTextTest, ASandboxIsShownByItsNameAndId) {
  EXPECT_EQ(SandboxTitle("3ba23e3aa3b41c6f", "web"), "web (3ba23e3aa3b41c6f)");
  EXPECT_EQ(SandboxTitle("3ba23e3aa3b41c6f", ""), "3ba23e3aa3b41c6f");
}

}  // namespace
}  // namespace sandboxd_review
