// sandboxctl's split of a hunk (review's `s`) against the daemon's parts (PATH:N.M): the same
// number of parts in the same order, each a hunk whose "@@" line tells where its lines are.

#include "hunk_split.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "text/hunk_parts.h"
#include "text/text_hunks.h"

namespace sandboxd {
namespace {

using api::SplitHunk;

TEST(HunkSplitTest, EachRunWithTheUnchangedLinesAroundIt) {
  const std::string hunk =
      "@@ -3,7 +3,7 @@ int main()\n"
      " c\n"
      "-d\n"
      "+D\n"
      " e\n"
      " f\n"
      "+g2\n"
      " h\n";
  auto parts = SplitHunk(hunk);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], "@@ -3,4 +3,4 @@\n c\n-d\n+D\n e\n f\n");
  EXPECT_EQ(parts[1], "@@ -5,3 +5,4 @@\n e\n f\n+g2\n h\n");
}

// `diff PATH:N.1 PATH:N.2`: neighbours asked for together are one hunk. Two parts share the
// unchanged lines between them, and git apply refuses hunks that overlap (the display-equals-
// commit property found it: `git apply` of the diff of approved parts 1.1 and 1.2 failed,
// "patch does not apply"); parts with one between them stay apart.
TEST(HunkSplitTest, AskedNeighboursAreJoined) {
  const std::string hunk =
      "@@ -1,6 +1,7 @@ f\n"
      "+top\n"
      " a\n"
      "-b\n"
      "+B\n"
      " c\n"
      " d\n"
      "-e\n"
      "+E\n"
      " f\n";
  auto parts = SplitHunk(hunk);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(api::AskedParts(hunk, {1, 2}), std::vector<std::string>{"@@ -1,4 +1,5 @@\n+top\n a\n-b\n+B\n c\n d\n"});
  EXPECT_EQ(api::AskedParts(hunk, {2, 3}), std::vector<std::string>{"@@ -1,6 +2,6 @@\n a\n-b\n+B\n c\n d\n-e\n+E\n f\n"});
  EXPECT_EQ(api::AskedParts(hunk, {1, 3}), (std::vector<std::string>{parts[0], parts[2]}));
  EXPECT_EQ(api::AskedParts(hunk, {2}), std::vector<std::string>{parts[1]});
  EXPECT_EQ(api::AskedParts(hunk, {1, 2, 3}), std::vector<std::string>{"@@ -1,6 +1,7 @@\n" + hunk.substr(hunk.find('\n') + 1)});
  EXPECT_EQ(api::AskedParts(hunk, {4}), std::vector<std::string>{});
  // A hunk of one run is its one part.
  EXPECT_EQ(api::AskedParts("@@ -1 +1 @@\n-a\n+b\n", {1}), std::vector<std::string>{"@@ -1 +1 @@\n-a\n+b\n"});
}

TEST(HunkSplitTest, OneRunOrAnUnreadableHunkIsOnePart) {
  EXPECT_EQ(SplitHunk("@@ -1 +1 @@\n-a\n+b\n"), std::vector<std::string>{"@@ -1 +1 @@\n-a\n+b\n"});
  EXPECT_EQ(SplitHunk("no header\n-a\n x\n+b\n"), std::vector<std::string>{"no header\n-a\n x\n+b\n"});
}

// The header's numbers are read, not trusted (fuzz/regressions/diff_split): a line number past
// what counting lines on from it can hold, a sign, or a header cut short leave the hunk whole.
TEST(HunkSplitTest, AHeaderWithNumbersOutOfRangeLeavesTheHunkWhole) {
  const std::string body = "-a\n b\n+c\n";
  for (std::string header : {"@@ -9223372036854775807 +1,3 @@", "@@ -1,2 +18446744073709551615,2 @@",
                             "@@ --5,2 +1,2 @@", "@@ -1,2 +-1,2 @@", "@@ -1,2 +1,2", "@@ -1,2 +1, @@"}) {
    auto hunk = header + "\n" + body;
    EXPECT_EQ(SplitHunk(hunk), std::vector<std::string>{hunk}) << header;
  }
  // The largest numbers read still split.
  auto parts = SplitHunk("@@ -1099511627776,2 +1099511627776,2 @@\n" + body);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1], "@@ -1099511627777 +1099511627776,2 @@\n b\n+c\n");
}

TEST(HunkSplitTest, NoNewlineAtTheEndGoesWithItsLine) {
  auto parts = SplitHunk("@@ -1,3 +1,3 @@\n-a\n+A\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n");
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0], "@@ -1,2 +1,2 @@\n-a\n+A\n b\n");
  EXPECT_EQ(parts[1], "@@ -2,2 +2,2 @@\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n");
}

/// The hunks of old → new as `diff` shows them, "@@" line and body.
class Hunks final : public HunkSink {
 public:
  void Hunk(int, std::string_view header, const HunkPlace&) override { texts.push_back(std::string(header) + "\n"); }
  bool WantsBody(int) override { return true; }
  void Body(std::string_view piece) override { texts.back().append(piece); }
  std::vector<std::string> texts;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(at, end - at));
    at = end;
  }
  return lines;
}

/// Every part's "@@ -a,b +c,d @@" names lines of old and new that its body holds.
void ExpectHeadersTell(const std::string& part, const std::vector<std::string>& old_lines, const std::vector<std::string>& new_lines) {
  long a = 0, b = 1, c = 0, d = 1;
  if (sscanf(part.c_str(), "@@ -%ld,%ld +%ld,%ld @@", &a, &b, &c, &d) != 4) {
    b = d = 1;
    if (sscanf(part.c_str(), "@@ -%ld +%ld,%ld @@", &a, &c, &d) != 3 && sscanf(part.c_str(), "@@ -%ld,%ld +%ld @@", &a, &b, &c) != 3) {
      d = 1;
      ASSERT_EQ(sscanf(part.c_str(), "@@ -%ld +%ld @@", &a, &c), 2) << part;
    }
  }
  size_t o = static_cast<size_t>(b == 0 ? a : a - 1), n = static_cast<size_t>(d == 0 ? c : c - 1);
  auto body = Lines(part);
  for (size_t i = 1; i < body.size(); ++i) {
    char origin = body[i][0];
    std::string content = body[i].substr(1);
    if (origin == ' ' || origin == '-') {
      ASSERT_LT(o, old_lines.size()) << part;
      EXPECT_EQ(old_lines[o++].substr(0, content.size() - 1), content.substr(0, content.size() - 1)) << part;
    }
    if (origin == ' ' || origin == '+') {
      ASSERT_LT(n, new_lines.size()) << part;
      EXPECT_EQ(new_lines[n++].substr(0, content.size() - 1), content.substr(0, content.size() - 1)) << part;
    }
  }
  EXPECT_EQ(o, static_cast<size_t>(b == 0 ? a : a - 1 + b)) << part;
  EXPECT_EQ(n, static_cast<size_t>(d == 0 ? c : c - 1 + d)) << part;
}

TEST(HunkSplitTest, AgreesWithTheDaemonsPartsOnRandomEdits) {
  std::mt19937 random(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> old_lines;
    for (int i = 0, n = 5 + static_cast<int>(random() % 40); i < n; ++i) old_lines.push_back("line " + std::to_string(random() % 12) + "\n");
    std::vector<std::string> new_lines;
    for (const auto& line : old_lines) {
      switch (random() % 8) {
        case 0: break;                                                          // deleted
        case 1: new_lines.push_back("new " + std::to_string(random() % 5) + "\n"); break;  // replaced
        case 2: new_lines.push_back(line); new_lines.push_back("added\n"); break;
        default: new_lines.push_back(line);
      }
    }
    std::string old_text, new_text;
    for (const auto& line : old_lines) old_text += line;
    for (const auto& line : new_lines) new_text += line;
    if (random() % 4 == 0 && !new_text.empty()) new_text.pop_back();  // no newline at the end
    SCOPED_TRACE("round " + std::to_string(round));
    for (int context : {0, 1, 3}) {
      Hunks hunks;
      ForEachHunk(MemoryText(old_text), MemoryText(new_text), context, hunks);
      std::vector<int> parts = CountHunkParts(MemoryText(old_text), MemoryText(new_text), context);
      ASSERT_EQ(parts.size(), hunks.texts.size());
      for (size_t h = 0; h < parts.size(); ++h) {
        auto split = SplitHunk(hunks.texts[h]);
        EXPECT_EQ(static_cast<int>(split.size()), parts[h]) << hunks.texts[h];
        for (const auto& part : split) ExpectHeadersTell(part, Lines(old_text), Lines(new_text));
      }
    }
  }
}

}  // namespace
}  // namespace sandboxd
