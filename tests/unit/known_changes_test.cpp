// KnownChanges against a plain set of {root, path}: a random run of Set calls (through several
// compactions) agrees with the set on every path and on the count, and a full scan's Add and
// Seal start again from what it adds.

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <utility>

#include "jobs/known_changes.h"

namespace sandboxd {
namespace {

TEST(KnownChangesTest, AgreesWithASetThroughManySetsAndCompactions) {
  std::mt19937 random(41);
  KnownChanges known;
  std::set<std::pair<size_t, std::string>> model;
  for (int i = 0; i < 3000; ++i) {
    known.Add(i % 2, "f" + std::to_string(i));
    model.emplace(i % 2, "f" + std::to_string(i));
  }
  known.Seal();
  ASSERT_EQ(known.size(), model.size());
  for (int step = 0; step < 40000; ++step) {
    size_t root = random() % 2;
    std::string path = "f" + std::to_string(random() % 6000);
    bool changed = random() % 3 != 0;
    known.Set(root, path, changed);
    if (changed)
      model.emplace(root, path);
    else
      model.erase({root, path});
    ASSERT_EQ(known.size(), model.size()) << "after step " << step;
  }
  for (size_t root = 0; root < 2; ++root)
    for (int i = 0; i < 6000; ++i) {
      std::string path = "f" + std::to_string(i);
      EXPECT_EQ(known.Contains(root, path), model.count({root, path}) == 1) << root << ":" << path;
    }
  EXPECT_FALSE(known.Contains(2, "f1")) << "a root that holds nothing";
}

TEST(KnownChangesTest, ASealStartsAgainFromWhatWasAdded) {
  KnownChanges known;
  known.Add(0, "a");
  known.Seal();
  known.Set(0, "b", true);
  KnownChanges again;
  again.Add(0, "c");
  again.Add(0, "c");  // a path added twice counts once
  again.Seal();
  EXPECT_EQ(again.size(), 1u);
  EXPECT_TRUE(again.Contains(0, "c"));
  EXPECT_FALSE(again.Contains(0, "a"));
  EXPECT_EQ(known.size(), 2u);
  EXPECT_TRUE(known.Contains(0, "b"));
  known.Set(0, "a", false);
  known.Set(0, "a", false);  // twice: still gone once
  EXPECT_EQ(known.size(), 1u);
}

}  // namespace
}  // namespace sandboxd
