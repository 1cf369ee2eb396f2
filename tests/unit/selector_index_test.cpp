// SelectorIndex answers exactly as SelectorNames (a whole-change selector) and a path's equality
// (a hunk or part selector) do one selector at a time, over random paths and selectors drawn from
// a small alphabet (so that they collide, names with ":N" among them). And typed selectors read
// as people mean them: git's quoting and "./" name exactly a file.

#include "selector.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

namespace sandboxd::api {
namespace {

std::string RandomPath(std::mt19937& random) {
  static const std::vector<std::string> kParts = {"a", "b", "ab", "a:1", "a:2", "c.txt", "c.txt:1", "."};
  std::string path;
  int depth = 1 + static_cast<int>(random() % 4);
  for (int i = 0; i < depth; ++i) path += (i ? "/" : "") + kParts[random() % kParts.size()];
  return path;
}

Selector RandomSelector(std::mt19937& random) {
  std::string path = RandomPath(random);
  switch (random() % 6) {
    case 0: return {path + "/"};
    case 1: return {path + "//"};
    case 2: return {path, 1 + static_cast<int>(random() % 3), static_cast<int>(random() % 3)};
    case 3: return {random() % 2 ? "." : "./"};
    default: return {path};
  }
}

TEST(SelectorIndexTest, NamesWhatEachSelectorNamesAlone) {
  std::mt19937 random(19);
  for (int round = 0; round < 2000; ++round) {
    std::vector<Selector> selectors;
    for (int i = 0, n = 1 + static_cast<int>(random() % 5); i < n; ++i) selectors.push_back(RandomSelector(random));
    SelectorIndex index(selectors);
    for (int p = 0; p < 10; ++p) {
      std::string path = RandomPath(random);
      std::set<size_t> expected_whole;
      std::set<std::pair<size_t, HunkRef>> expected_hunks;
      for (size_t i = 0; i < selectors.size(); ++i) {
        if (!selectors[i].hunk && SelectorNames(selectors[i].path, path)) expected_whole.insert(i);
        if (selectors[i].hunk && selectors[i].path == path) expected_hunks.insert({i, selectors[i].ref()});
      }
      std::set<size_t> whole;
      index.ForEachNaming(path, [&](size_t i) { whole.insert(i); });
      EXPECT_EQ(whole, expected_whole) << "path " << path;
      EXPECT_EQ(index.AnyNames(path), !expected_whole.empty());
      const auto& hunks = index.HunksOf(path);
      std::set<std::pair<size_t, HunkRef>> found(hunks.begin(), hunks.end());
      EXPECT_EQ(found, expected_hunks) << "path " << path;
    }
  }
}

/// {whole path or "-", hunk path or "-", hunk, part} of a typed selector's readings.
std::string Readings(std::string_view typed) {
  auto parsed = ParseTypedSelector(typed);
  if (!parsed) return "refused";
  return (parsed->whole ? parsed->whole->path : "-") + " " +
         (parsed->hunk ? parsed->hunk->path + " " + ToString(parsed->hunk->ref()) : "-");
}

TEST(TypedSelectorTest, ANumberAfterAColonReadsBothWaysAndQuotesOrDotSlashSayWhichIsMeant) {
  EXPECT_EQ(Readings("run.sh"), "run.sh -");
  EXPECT_EQ(Readings("run.sh:1"), "run.sh:1 run.sh 1");
  EXPECT_EQ(Readings("run.sh:1.2"), "run.sh:1.2 run.sh 1.2");
  EXPECT_EQ(Readings("\"run.sh:1\""), "run.sh:1 -");
  EXPECT_EQ(Readings("./run.sh:1"), "run.sh:1 -");
  EXPECT_EQ(Readings("./"), ". -");
  EXPECT_EQ(Readings("\"run.sh\":1"), "- run.sh 1");
  EXPECT_EQ(Readings("\"run.sh\":1.2"), "- run.sh 1.2");
  EXPECT_EQ(Readings("\"raw\\377name\""), "raw\xffname -");
  EXPECT_EQ(Readings("\"a\\\"b:1\":2"), "- a\"b:1 2");
  // Quoting that does not parse, or anything but a number after the closing quote.
  EXPECT_EQ(Readings("\"unclosed"), "refused");
  EXPECT_EQ(Readings("\"a\"b"), "refused");
  EXPECT_EQ(Readings("\"a\":x"), "refused");
  EXPECT_EQ(Readings("\"a\":0"), "refused");
}

}  // namespace
}  // namespace sandboxd::api
