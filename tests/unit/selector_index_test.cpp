// SelectorIndex answers exactly as SelectorNames and ParseHunkSelector do one selector at a
// time, over random paths and selectors drawn from a small alphabet (so that they collide).

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

std::string RandomSelector(std::mt19937& random) {
  std::string selector = RandomPath(random);
  switch (random() % 6) {
    case 0: return selector + "/";
    case 1: return selector + "//";
    case 2: return selector + ":" + std::to_string(random() % 3) + (random() % 2 ? "" : "." + std::to_string(random() % 3));
    case 3: return random() % 2 ? "." : "./";
    default: return selector;
  }
}

TEST(SelectorIndexTest, NamesWhatEachSelectorNamesAlone) {
  std::mt19937 random(19);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> selectors;
    for (int i = 0, n = 1 + static_cast<int>(random() % 5); i < n; ++i) selectors.push_back(RandomSelector(random));
    SelectorIndex index(selectors);
    for (int p = 0; p < 10; ++p) {
      std::string path = RandomPath(random);
      std::set<size_t> expected_whole;
      std::set<std::pair<size_t, HunkRef>> expected_hunks;
      for (size_t i = 0; i < selectors.size(); ++i) {
        if (SelectorNames(selectors[i], path)) expected_whole.insert(i);
        if (auto hunk = ParseHunkSelector(selectors[i]); hunk && hunk->path == path) expected_hunks.insert({i, hunk->ref()});
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

}  // namespace
}  // namespace sandboxd::api
