#include "garbage_collection.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

constexpr int64_t kSecond = 1000000;
constexpr int64_t kNow = 1000000 * kSecond;

GcCandidate Sandbox(const std::string& id, uint64_t bytes, bool suspended, int64_t created, int64_t last_used = kNow,
                    uint64_t ttl = 0, unsigned jobs = 0) {
  return {id, suspended, jobs, created, last_used, ttl, bytes};
}

std::vector<std::string> Ids(const std::vector<GcRemoval>& removals) {
  std::vector<std::string> ids;
  for (const auto& removal : removals) ids.push_back(removal.id);
  return ids;
}

TEST(GarbageCollectionTest, OnlyIdleSandboxesPastTheirTtlExpire) {
  auto removals = ChooseGarbage({Sandbox("idle", 10, false, 0, kNow - 3600 * kSecond, 1800),
                                 Sandbox("recent", 10, false, 0, kNow - 60 * kSecond, 1800),
                                 Sandbox("forever", 10, true, 0, 0, 0),
                                 Sandbox("busy", 10, false, 0, kNow - 7200 * kSecond, 60, /*jobs=*/1)},
                                0, kNow);
  EXPECT_EQ(Ids(removals), std::vector<std::string>{"idle"});
  EXPECT_EQ(removals[0].why, "expired: idle for 1h, its ttl is 30m");
}

TEST(GarbageCollectionTest, OverTheCapTheLargestSuspendedGoFirstTheOldestAmongEquals) {
  std::vector<GcCandidate> sandboxes = {
      Sandbox("active-huge", 100, false, 1),  // active: never for space
      Sandbox("small", 10, true, 2),
      Sandbox("big-young", 40, true, 5),
      Sandbox("big-old", 40, true, 3),
      Sandbox("middle", 20, true, 4),
      Sandbox("running", 500, true, 6, kNow, 0, /*jobs=*/1),  // never while a job runs
  };
  // 710 in all: the 40s go (oldest first), then 20, and 610 is still over 600... then small.
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 600, kNow)), (std::vector<std::string>{"big-old", "big-young", "middle", "small"}));
  // Just over: one is enough.
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 690, kNow)), (std::vector<std::string>{"big-old"}));
  EXPECT_TRUE(ChooseGarbage(sandboxes, 710, kNow).empty());
  EXPECT_TRUE(ChooseGarbage(sandboxes, 0, kNow).empty()) << "no cap, no collection for space";
}

TEST(GarbageCollectionTest, ExpiredOnesGoFirstAndCountTowardsTheCap) {
  std::vector<GcCandidate> sandboxes = {
      Sandbox("expired", 50, false, 1, kNow - 10 * kSecond, 5),
      Sandbox("suspended", 60, true, 2),
  };
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 60, kNow)), std::vector<std::string>{"expired"});
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 59, kNow)), (std::vector<std::string>{"expired", "suspended"}));
}

TEST(GarbageCollectionTest, SecondsAreDescribedInTheirLargestWholeUnit) {
  EXPECT_EQ(DescribeSeconds(90), "90s");
  EXPECT_EQ(DescribeSeconds(300), "5m");
  EXPECT_EQ(DescribeSeconds(7200), "2h");
  EXPECT_EQ(DescribeSeconds(604800), "7d");
  EXPECT_EQ(DescribeSeconds(0), "0s");
}

}  // namespace
}  // namespace sandboxd
