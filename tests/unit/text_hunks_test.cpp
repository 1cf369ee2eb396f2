#include "text/text_hunks.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/errors.h"
#include "temp_dir.h"
#include "text/hunk_merge.h"
#include "text/hunk_parts.h"
#include "text/text_file.h"
#include "text/text_source.h"
#include "numbered_lines.h"

// The windowed way of ForEachHunk, driven on small texts with tiny windows: where the lines are
// unique it must give exactly the hunks libgit2 gives for the whole texts (headers, bodies,
// places); everywhere it must give a correct diff.

namespace sandboxd {
namespace {

struct Collected {
  std::string header, body;
  HunkPlace place;
};

class Collector final : public HunkSink {
 public:
  void Hunk(int number, std::string_view header, const HunkPlace& place) override {
    EXPECT_EQ(number, static_cast<int>(hunks.size()) + 1);
    hunks.push_back({std::string(header), "", place});
  }
  bool WantsBody(int) override { return true; }
  void Body(std::string_view piece) override { hunks.back().body.append(piece); }
  std::vector<Collected> hunks;
};

std::vector<Collected> Hunks(std::string_view old_text, std::string_view new_text, const TextDiffLimits& limits,
                             int context = 3) {
  Collector collector;
  ForEachHunk(MemoryText(old_text), MemoryText(new_text), context, collector, limits);
  return collector.hunks;
}

/// Limits that send every non-empty text through windows of at most `bytes` and `lines`.
TextDiffLimits Windows(size_t bytes, size_t lines) {
  TextDiffLimits limits;
  limits.whole_bytes = 0;
  limits.window_bytes = bytes;
  limits.window_lines = lines;
  return limits;
}

std::string Show(const std::vector<Collected>& hunks) {
  std::string text;
  for (const auto& hunk : hunks)
    text += hunk.header + " [" + std::to_string(hunk.place.old_begin) + "," + std::to_string(hunk.place.old_end) + " " +
            std::to_string(hunk.place.new_begin) + "," + std::to_string(hunk.place.new_end) + "]\n" + hunk.body;
  return text;
}

void ExpectSameHunks(const std::vector<Collected>& windowed, const std::vector<Collected>& whole) {
  EXPECT_EQ(Show(windowed), Show(whole));
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

/// Every hunk's header, body and place describe old and new as they are, hunks come in order,
/// and merging all hunks gives the new text, none the old one.
void ExpectCorrectDiff(const std::string& old_text, const std::string& new_text, const std::vector<Collected>& hunks,
                       const TextDiffLimits& limits, int context = 3) {
  std::vector<std::string> old_lines = SplitLines(old_text), new_lines = SplitLines(new_text);
  std::vector<uint64_t> old_at{0}, new_at{0};
  for (const auto& line : old_lines) old_at.push_back(old_at.back() + line.size());
  for (const auto& line : new_lines) new_at.push_back(new_at.back() + line.size());
  uint64_t old_done = 0;
  for (const auto& hunk : hunks) {
    SCOPED_TRACE(hunk.header);
    long a = 0, b = 1, c = 0, d = 1;
    if (sscanf(hunk.header.c_str(), "@@ -%ld,%ld +%ld,%ld @@", &a, &b, &c, &d) != 4) {
      b = d = 1;
      if (sscanf(hunk.header.c_str(), "@@ -%ld +%ld,%ld @@", &a, &c, &d) != 3 &&
          sscanf(hunk.header.c_str(), "@@ -%ld,%ld +%ld @@", &a, &b, &c) != 3) {
        d = 1;
        ASSERT_EQ(sscanf(hunk.header.c_str(), "@@ -%ld +%ld @@", &a, &c), 2);
      }
    }
    size_t old_line = static_cast<size_t>(b ? a - 1 : a), new_line = static_cast<size_t>(d ? c - 1 : c);
    ASSERT_GE(old_line, old_done);
    EXPECT_EQ(hunk.place.old_begin, old_at.at(old_line));
    EXPECT_EQ(hunk.place.old_end, old_at.at(old_line + static_cast<size_t>(b)));
    EXPECT_EQ(hunk.place.new_begin, new_at.at(new_line));
    EXPECT_EQ(hunk.place.new_end, new_at.at(new_line + static_cast<size_t>(d)));
    std::vector<std::string> body = SplitLines(hunk.body);
    size_t o = old_line, n = new_line;
    for (size_t i = 0; i < body.size(); ++i) {
      ASSERT_FALSE(body[i].empty());
      if (body[i] == "\\ No newline at end of file\n") continue;
      std::string content = body[i].substr(1);
      if (i + 1 < body.size() && body[i + 1] == "\\ No newline at end of file\n") content.pop_back();
      char origin = body[i][0];
      ASSERT_TRUE(origin == ' ' || origin == '-' || origin == '+') << body[i];
      if (origin != '+') {
        EXPECT_EQ(content, old_lines.at(o++));
      }
      if (origin != '-') {
        EXPECT_EQ(content, new_lines.at(n++));
      }
    }
    EXPECT_EQ(o, old_line + static_cast<size_t>(b));
    EXPECT_EQ(n, new_line + static_cast<size_t>(d));
    old_done = o;
  }
  std::set<int> all;
  for (int i = 1; i <= static_cast<int>(hunks.size()); ++i) all.insert(i);
  std::string merged;
  MergeHunks(MemoryText(old_text), MemoryText(new_text), all, [&](std::string_view piece) { merged.append(piece); }, context, limits);
  EXPECT_TRUE(merged == new_text) << "merging every hunk does not give the new text";
  merged.clear();
  MergeHunks(MemoryText(old_text), MemoryText(new_text), std::set<int>{}, [&](std::string_view piece) { merged.append(piece); },
             context, limits);
  EXPECT_TRUE(merged == old_text) << "merging no hunk does not give the old text";

  // Parts (git add -p's split): as many as runs of changed lines in the body, and together
  // they are their hunk: every part of hunk h merges to what hunk h whole merges to, the
  // first part alone to something between.
  std::vector<int> parts = CountHunkParts(MemoryText(old_text), MemoryText(new_text), context, limits);
  ASSERT_EQ(parts.size(), hunks.size());
  auto merge = [&](const HunkPick& pick) {
    std::string text;
    MergeHunks(MemoryText(old_text), MemoryText(new_text), pick, [&](std::string_view piece) { text.append(piece); }, context,
               limits);
    return text;
  };
  for (size_t h = 0; h < hunks.size(); ++h) {
    int runs = 0;
    bool in_run = false;
    for (const auto& line : SplitLines(hunks[h].body)) {
      bool changed = line[0] == '-' || line[0] == '+';
      runs += changed && !in_run;
      if (line[0] != '\\') in_run = changed;
    }
    EXPECT_EQ(parts[h], runs) << "hunk " << h + 1 << " parts";
    const int number = static_cast<int>(h + 1);
    HunkPick every{{}, {{number, {}}}};
    for (int p = 1; p <= parts[h]; ++p) every.parts[number].insert(p);
    std::string whole = merge(HunkPick{{number}, {}});
    EXPECT_TRUE(merge(every) == whole) << "every part of hunk " << number << " is not the hunk";
    if (parts[h] > 1) {
      std::string first = merge(HunkPick{{}, {{number, {1}}}});
      EXPECT_TRUE(first != whole && first != old_text) << "part 1 of hunk " << number << " is all or nothing of it";
    }
  }
}

using testing::Lines;

/// A line no other call returns, of varied shape: starting with a letter (a function line for
/// hunk headers), a digit, a space or a multi-byte character; short or long; with trailing
/// blanks or a CR.
std::string UniqueLine(std::mt19937& rng, int& next_id) {
  static const char* const kStarts[] = {"fn ", "1 ", "  ", "\xc3\xa9t\xc3\xa9 ", "_x ", "$v ", "# "};
  std::string line = kStarts[rng() % 7] + std::to_string(next_id++);
  switch (rng() % 6) {
    case 0: line += std::string(rng() % 120, 'w') + "\xe2\x82\xac\xe2\x82\xac"; break;  // past 80 bytes, cut in a character
    case 1: line += "   \t"; break;
    case 2: line += "\r"; break;
    default: line += " text"; break;
  }
  return line + "\n";
}

struct Pair {
  std::string old_text, new_text;
};

/// `lines` unique lines, and the same with `edits` small edits (replace, insert or delete up to
/// five lines) at random places; either text may lose its last newline.
Pair RandomPair(std::mt19937& rng, int lines, int edits) {
  int next_id = 0;
  std::vector<std::string> old_lines;
  for (int i = 0; i < lines; ++i) old_lines.push_back(UniqueLine(rng, next_id));
  std::vector<std::string> new_lines = old_lines;
  std::vector<int> at;
  for (int e = 0; e < edits; ++e) at.push_back(static_cast<int>(rng() % (static_cast<unsigned>(lines) + 1)));
  std::sort(at.rbegin(), at.rend());
  for (int position : at) {
    auto where = new_lines.begin() + std::min<long>(position, static_cast<long>(new_lines.size()));
    int count = 1 + static_cast<int>(rng() % 5);
    switch (rng() % 3) {
      case 0:  // replace
        for (int i = 0; i < count && where != new_lines.end(); ++i) where = new_lines.erase(where);
        for (int i = 0; i < 1 + static_cast<int>(rng() % 3); ++i) where = new_lines.insert(where, UniqueLine(rng, next_id)) + 1;
        break;
      case 1:  // insert
        for (int i = 0; i < count; ++i) where = new_lines.insert(where, UniqueLine(rng, next_id)) + 1;
        break;
      default:  // delete
        for (int i = 0; i < count && where != new_lines.end(); ++i) where = new_lines.erase(where);
        break;
    }
  }
  Pair pair;
  for (const auto& line : old_lines) pair.old_text += line;
  for (const auto& line : new_lines) pair.new_text += line;
  if (rng() % 4 == 0 && !pair.old_text.empty()) pair.old_text.pop_back();
  if (rng() % 4 == 0 && !pair.new_text.empty()) pair.new_text.pop_back();
  return pair;
}

TEST(TextHunksTest, WindowedHunksAreLibgit2sForUniqueLines) {
  std::mt19937 rng(19);
  for (int round = 0; round < 300; ++round) {
    Pair pair = RandomPair(rng, 20 + static_cast<int>(rng() % 300), static_cast<int>(rng() % 12));
    auto whole = Hunks(pair.old_text, pair.new_text, TextDiffLimits{});
    for (auto limits : {Windows(4000, 16), Windows(100000, 40), Windows(2500, 1000)}) {
      SCOPED_TRACE("round " + std::to_string(round) + ", windows of " + std::to_string(limits.window_bytes) + " bytes, " +
                   std::to_string(limits.window_lines) + " lines");
      auto windowed = Hunks(pair.old_text, pair.new_text, limits);
      ExpectSameHunks(windowed, whole);
      ExpectCorrectDiff(pair.old_text, pair.new_text, windowed, limits);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(TextHunksTest, EditsAroundEveryWindowCutGroupAsInGit) {
  // An edit at the start of a window and a second one `gap` lines later: for every window size
  // the second falls before, on or after a cut, and within 2 x 3 lines both are one hunk.
  for (int gap = 1; gap <= 10; ++gap) {
    for (size_t window = 1; window <= 8; ++window) {
      SCOPED_TRACE("gap " + std::to_string(gap) + ", windows of " + std::to_string(window) + " lines");
      std::string old_text = Lines(1, 60);
      std::string new_text = Lines(1, 19) + "edited 20\n" + Lines(21, 20 + gap - 1) + "edited second\n" + Lines(21 + gap, 60);
      auto whole = Hunks(old_text, new_text, TextDiffLimits{});
      ASSERT_EQ(whole.size(), gap <= 7 ? 1u : 2u);
      ExpectSameHunks(Hunks(old_text, new_text, Windows(10000, window)), whole);
      // With zero context only adjacent runs share a hunk.
      ExpectSameHunks(Hunks(old_text, new_text, Windows(10000, window), 0), Hunks(old_text, new_text, TextDiffLimits{}, 0));
    }
  }
}

TEST(TextHunksTest, AnInsertionOrDeletionBiggerThanAWindowIsFoundFurtherOn) {
  std::string old_text = Lines(1, 100);
  std::string inserted = Lines(1, 40) + Lines(1, 300, " inserted") + Lines(41, 100);
  ExpectSameHunks(Hunks(old_text, inserted, Windows(10000, 16)), Hunks(old_text, inserted, TextDiffLimits{}));
  ExpectSameHunks(Hunks(inserted, old_text, Windows(10000, 16)), Hunks(inserted, old_text, TextDiffLimits{}));
  // Two of them, one in each direction, with an edit in between.
  std::string both = Lines(1, 20) + Lines(1, 50, " inserted") + Lines(21, 30) + "edited\n" + Lines(32, 60) + Lines(91, 100);
  ExpectSameHunks(Hunks(old_text, both, Windows(10000, 8)), Hunks(old_text, both, TextDiffLimits{}));
  ExpectSameHunks(Hunks(both, old_text, Windows(10000, 8)), Hunks(both, old_text, TextDiffLimits{}));
  ExpectCorrectDiff(old_text, both, Hunks(old_text, both, Windows(10000, 8)), Windows(10000, 8));
}

TEST(TextHunksTest, ARewriteBiggerThanAWindowIsStillACorrectDiff) {
  std::string old_text = Lines(1, 100);
  std::string new_text = Lines(1, 30) + Lines(1, 80, " rewritten") + Lines(61, 100);
  auto windowed = Hunks(old_text, new_text, Windows(10000, 16));
  ExpectCorrectDiff(old_text, new_text, windowed, Windows(10000, 16));
  EXPECT_EQ(windowed.size(), 1u);
  // Nothing in common at all, and one side empty.
  ExpectCorrectDiff(Lines(1, 50, " a"), Lines(1, 70, " b"), Hunks(Lines(1, 50, " a"), Lines(1, 70, " b"), Windows(10000, 4)),
                    Windows(10000, 4));
  ExpectSameHunks(Hunks("", Lines(1, 70), Windows(10000, 4)), Hunks("", Lines(1, 70), TextDiffLimits{}));
  ExpectSameHunks(Hunks(Lines(1, 70), "", Windows(10000, 4)), Hunks(Lines(1, 70), "", TextDiffLimits{}));
}

TEST(TextHunksTest, RepeatedLinesStillGiveACorrectDiff) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    // Lines from a small alphabet repeat everywhere: windows may align them unlike libgit2.
    std::string old_text, new_text;
    int lines = 10 + static_cast<int>(rng() % 200);
    for (int i = 0; i < lines; ++i) {
      std::string line = std::string(1, static_cast<char>('a' + rng() % 3)) + "\n";
      old_text += line;
      if (rng() % 8 == 0) new_text += std::string(1, static_cast<char>('a' + rng() % 4)) + "\n";
      if (rng() % 8 != 0) new_text += line;
    }
    SCOPED_TRACE("round " + std::to_string(round));
    for (auto limits : {Windows(64, 4), Windows(10000, 16)}) {
      ExpectCorrectDiff(old_text, new_text, Hunks(old_text, new_text, limits), limits);
      ExpectCorrectDiff(old_text, new_text, Hunks(old_text, new_text, limits, 1), limits, 1);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(TextHunksTest, ALineLongerThanAWindow) {
  std::string long_old = "x" + std::string(5000, 'o') + "\n", long_new = "x" + std::string(5000, 'n') + "\n";
  std::string old_text = Lines(1, 20) + long_old + Lines(22, 40);
  std::string new_text = Lines(1, 20) + long_new + Lines(22, 40);
  ExpectSameHunks(Hunks(old_text, new_text, Windows(1000, 64)), Hunks(old_text, new_text, TextDiffLimits{}));
  // Inserted where libgit2 could not see it: still a correct diff.
  std::string with_long = Lines(1, 20) + long_new + Lines(21, 40);
  ExpectCorrectDiff(Lines(1, 40), with_long, Hunks(Lines(1, 40), with_long, Windows(1000, 64)), Windows(1000, 64));
}

TEST(TextHunksTest, TheHeaderNamesAFunctionLineFarBeforeTheWindow) {
  std::string old_text = "int main(void)   \n";
  for (int i = 0; i < 500; ++i) old_text += std::to_string(i) + " not a function line\n";
  std::string new_text = old_text + "added\n";
  old_text += "last\n";
  new_text += "last\n";
  auto whole = Hunks(old_text, new_text, TextDiffLimits{});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].header, "@@ -499,4 +499,5 @@ int main(void)");
  ExpectSameHunks(Hunks(old_text, new_text, Windows(200, 4)), whole);
}

TEST(TextHunksTest, NoNewlineAtTheEndAsLibgit2) {
  for (const auto& [old_text, new_text] : std::vector<std::pair<std::string, std::string>>{
           {Lines(1, 30) + "last", Lines(1, 30) + "last\n"},
           {Lines(1, 30) + "last\n", Lines(1, 30) + "last"},
           {Lines(1, 30) + "last", Lines(1, 29) + "changed\nlast"},
           {Lines(1, 30) + "last", Lines(1, 30) + "other"},
           {"last", "other"},
       }) {
    SCOPED_TRACE(new_text.substr(new_text.size() > 10 ? new_text.size() - 10 : 0));
    ExpectSameHunks(Hunks(old_text, new_text, Windows(64, 4)), Hunks(old_text, new_text, TextDiffLimits{}));
  }
}

TEST(TextHunksTest, AHunkOfTooManyRunsShowsThemAsOne) {
  std::string old_text = Lines(1, 60), new_text;
  for (int i = 1; i <= 60; ++i) new_text += i % 3 == 0 && i < 40 ? "edited " + std::to_string(i) + "\n" : "line " + std::to_string(i) + "\n";
  TextDiffLimits limits = Windows(10000, 16);
  ExpectSameHunks(Hunks(old_text, new_text, limits), Hunks(old_text, new_text, TextDiffLimits{}));
  limits.hunk_runs = 4;
  auto hunks = Hunks(old_text, new_text, limits);
  ASSERT_EQ(hunks.size(), 1u);
  ExpectCorrectDiff(old_text, new_text, hunks, limits);
}

TEST(TextHunksTest, SmallTextsOfManyLinesGoByWindowsToo) {
  // libgit2 takes ~90 bytes a line: a small text of very many lines is not handed it whole.
  std::string old_text(3000, '\n'), new_text = old_text;
  new_text[1500] = 'x';
  TextDiffLimits limits;
  limits.whole_lines = 100;
  limits.window_lines = 64;
  auto windowed = Hunks(old_text, new_text, limits);
  ExpectCorrectDiff(old_text, new_text, windowed, limits);
  EXPECT_EQ(windowed.size(), 1u);
}

TEST(TextHunksTest, AFileThatShrinksWhileItIsReadIsRefused) {
  testing::ScopedTempDir dir;
  testing::WriteFile(dir / "f", Lines(1, 1000));
  UniqueFd root(open(dir.path().c_str(), O_PATH | O_DIRECTORY));
  std::string why;
  auto file = OpenTextFile(root.get(), "f", kBigFileThreshold, &why);
  ASSERT_TRUE(file) << why;
  file->CheckUnchanged();
  ASSERT_EQ(truncate((dir / "f").c_str(), 100), 0);
  char buffer[64];
  EXPECT_THROW(file->Read(file->size() - 64, 64, buffer), Error);
  EXPECT_THROW(file->CheckUnchanged(), Error);
}

}  // namespace
}  // namespace sandboxd
