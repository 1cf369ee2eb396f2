// The decisions and sights a streaming listing merges with its scan, read a page at a time from
// the real SQLite store: every record is found at its key, none elsewhere, whatever the page
// size and however the keys fall across roots and pages (names with bytes on both sides of '/',
// as the scan orders them).

#include "store/ordered_lookup.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "review/approval_store.h"
#include "sandbox/live_sight.h"
#include "store/store.h"

namespace sandboxd {
namespace {

class OrderedLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/sbx-lookup-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override { system(("rm -rf " + dir_).c_str()); }
  std::string dir_;
};

/// Random paths of a few roots, with names that sort around '/'.
std::set<RecordKey> RandomKeys(std::mt19937& random, size_t count) {
  const std::vector<std::string> parts = {"a", "a-b", "a.c", "a b", "b", "\xc3\xa9", "z"};
  std::set<RecordKey> keys;
  while (keys.size() < count) {
    std::string path;
    for (size_t depth = 1 + random() % 4; depth > 0; --depth) path += (path.empty() ? "" : "/") + parts[random() % parts.size()] + std::to_string(random() % 5);
    keys.insert({random() % 3, path});
  }
  return keys;
}

TEST_F(OrderedLookupTest, EveryRecordIsFoundAtItsKeyAndNoneElsewhere) {
  Store store(dir_ + "/db");
  store.Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/r0", "/r1", "/r2"}});
  store.Insert({"00000000000000bb", "other", 1000, SandboxState::kActive, 5, {"/r0", "/r1", "/r2"}});
  ApprovalStore approvals(store);
  SightStore sights(store);
  for (unsigned seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    approvals.Clear("00000000000000aa");
    sights.Clear("00000000000000aa");
    std::mt19937 random(seed);
    std::set<RecordKey> asked = RandomKeys(random, 3000);
    std::vector<Approval> decided;
    Sights seen;
    for (const auto& key : asked) {
      if (random() % 3 == 0) {
        Approval approval;
        approval.root = key.first;
        approval.path = key.second;
        approval.fingerprint = "f" + key.second;
        approval.whole = Verdict::kApproved;
        decided.push_back(approval);
      }
      if (random() % 2 == 0) seen[key] = "s" + key.second;
    }
    // Another sandbox's records are never found.
    Approval foreign;
    foreign.path = asked.begin()->second;
    foreign.whole = Verdict::kRejected;
    approvals.Save("00000000000000bb", {foreign});
    approvals.Save("00000000000000aa", decided);
    sights.RecordFirst("00000000000000aa", seen);
    std::set<RecordKey> decided_keys;
    for (const auto& approval : decided) decided_keys.insert({approval.root, approval.path});
    for (size_t page : {1, 7, 2048}) {
      OrderedLookup<Approval> approval_lookup([&](const RecordKey& from, size_t limit) {
        return approvals.Page("00000000000000aa", from, limit);
      }, page);
      auto sight_lookup = OrderedLookup<std::string>(
          [&](const RecordKey& from, size_t limit) { return sights.Page("00000000000000aa", from, limit); }, page);
      size_t found_approvals = 0, found_sights = 0;
      for (const auto& key : asked) {
        const Approval* approval = approval_lookup.Find(key);
        ASSERT_EQ(approval != nullptr, decided_keys.count(key) > 0) << key.first << "/" << key.second;
        if (approval) {
          EXPECT_EQ(approval->fingerprint, "f" + key.second);
          EXPECT_EQ(approval->whole, Verdict::kApproved);
          ++found_approvals;
        }
        const std::string* sight = sight_lookup.Find(key);
        ASSERT_EQ(sight != nullptr, seen.count(key) > 0) << key.first << "/" << key.second;
        if (sight) {
          EXPECT_EQ(*sight, "s" + key.second);
          ++found_sights;
        }
      }
      EXPECT_EQ(found_approvals, decided.size());
      EXPECT_EQ(found_sights, seen.size());
    }
  }
}

// Keys asked that fall between records, before the first and after the last.
TEST_F(OrderedLookupTest, KeysBetweenRecordsFindNothing) {
  std::vector<std::pair<RecordKey, int>> records = {{{0, "b"}, 1}, {{0, "b/c"}, 2}, {{1, "a"}, 3}};
  OrderedLookup<int> lookup([&](const RecordKey& from, size_t limit) {
    OrderedLookup<int>::Page page;
    for (const auto& record : records)
      if (!(record.first < from) && page.size() < limit) page.push_back(record);
    return page;
  }, 1);
  EXPECT_EQ(lookup.Find({0, "a"}), nullptr);
  ASSERT_NE(lookup.Find({0, "b"}), nullptr);
  EXPECT_EQ(lookup.Find({0, "b.x"}), nullptr);  // '.' sorts before '/': b, b.x, b/c
  ASSERT_NE(lookup.Find({0, "b/c"}), nullptr);
  EXPECT_EQ(*lookup.Find({1, "a"}), 3);
  EXPECT_EQ(lookup.Find({2, ""}), nullptr);
}

// A few keys far apart (the settling of a job that changed a few files among many) read a page
// at each, not every record between them.
TEST_F(OrderedLookupTest, KeysFarApartReadAPageEach) {
  std::vector<std::pair<RecordKey, int>> records;
  for (int i = 0; i < 10000; ++i) {
    char name[16];
    snprintf(name, sizeof name, "f%05d", i);
    records.push_back({{0, name}, i});
  }
  size_t fetches = 0, read = 0;
  OrderedLookup<int> lookup([&](const RecordKey& from, size_t limit) {
    ++fetches;
    OrderedLookup<int>::Page page;
    for (const auto& record : records)
      if (!(record.first < from) && page.size() < limit) page.push_back(record);
    read += page.size();
    return page;
  }, 100);
  EXPECT_EQ(*lookup.Find({0, "f00010"}), 10);
  EXPECT_EQ(*lookup.Find({0, "f05000"}), 5000);
  EXPECT_EQ(lookup.Find({0, "f05000x"}), nullptr);
  EXPECT_EQ(*lookup.Find({0, "f09999"}), 9999);
  EXPECT_EQ(fetches, 3u);
  EXPECT_LE(read, 300u);
}

}  // namespace
}  // namespace sandboxd

namespace sandboxd {
namespace {

// A key asked before the last one (a directory a partial commit takes along, after a sibling
// such as "d-1" that sorts between it and its children) is still found.
TEST(OrderedLookupOrderTest, AKeyBeforeTheLastAskedIsStillFound) {
  std::vector<std::pair<RecordKey, int>> records = {{{0, "d"}, 1}, {{0, "d-1"}, 2}, {{0, "d/x"}, 3}};
  OrderedLookup<int> lookup([&](const RecordKey& from, size_t limit) {
    OrderedLookup<int>::Page page;
    for (const auto& record : records)
      if (!(record.first < from) && page.size() < limit) page.push_back(record);
    return page;
  }, 2);
  ASSERT_NE(lookup.Find({0, "d-1"}), nullptr);
  const int* directory = lookup.Find({0, "d"});
  ASSERT_NE(directory, nullptr);
  EXPECT_EQ(*directory, 1);
  ASSERT_NE(lookup.Find({0, "d/x"}), nullptr);
  EXPECT_EQ(*lookup.Find({0, "d/x"}), 3);
}

// Records stored while the lookup reads (sights a settling stores behind a listing's pages):
// a page read before them lacks them, and Forget reads afresh.
TEST(OrderedLookupOrderTest, RecordsStoredAfterAPageWasReadAreFoundAfterForget) {
  std::vector<std::pair<RecordKey, int>> records = {{{0, "a"}, 1}};
  OrderedLookup<int> lookup([&](const RecordKey& from, size_t limit) {
    OrderedLookup<int>::Page page;
    for (const auto& record : records)
      if (!(record.first < from) && page.size() < limit) page.push_back(record);
    return page;
  });
  ASSERT_NE(lookup.Find({0, "a"}), nullptr);
  records.push_back({{0, "b"}, 2});
  EXPECT_EQ(lookup.Find({0, "b"}), nullptr) << "the page read before b was stored is expected to lack it";
  lookup.Forget();
  ASSERT_NE(lookup.Find({0, "b"}), nullptr);
  EXPECT_EQ(*lookup.Find({0, "b"}), 2);
}

}  // namespace
}  // namespace sandboxd
