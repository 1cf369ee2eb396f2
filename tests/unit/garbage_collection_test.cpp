#include "lifecycle/garbage_collection.h"

#include <gtest/gtest.h>

#include "runtime/clock.h"

namespace sandboxd {
namespace {

constexpr int64_t kNow = 1000000 * kSecondUsec;

GcCandidate Candidate(const std::string& id, uint64_t bytes, bool suspended, int64_t created, int64_t last_used = kNow,
                    uint64_t ttl = 0, unsigned jobs = 0) {
  return {id, suspended, jobs, created, last_used, ttl, bytes};
}

std::vector<std::string> Ids(const std::vector<GcRemoval>& removals) {
  std::vector<std::string> ids;
  for (const auto& removal : removals) ids.push_back(removal.id);
  return ids;
}

TEST(GarbageCollectionTest, OnlyIdleSandboxesPastTheirTtlExpire) {
  auto removals = ChooseGarbage({Candidate("idle", 10, false, 0, kNow - 3600 * kSecondUsec, 1800),
                                 Candidate("recent", 10, false, 0, kNow - 60 * kSecondUsec, 1800),
                                 Candidate("forever", 10, true, 0, 0, 0),
                                 Candidate("busy", 10, false, 0, kNow - 7200 * kSecondUsec, 60, /*jobs=*/1)},
                                0, kNow);
  EXPECT_EQ(Ids(removals), std::vector<std::string>{"idle"});
  EXPECT_EQ(removals[0].why, "expired: idle for 1h, its ttl is 30m");
}

TEST(GarbageCollectionTest, OverTheCapTheLargestSuspendedGoFirstTheOldestAmongEquals) {
  std::vector<GcCandidate> sandboxes = {
      Candidate("active-huge", 100, false, 1),  // active: never for space
      Candidate("small", 10, true, 2),
      Candidate("big-young", 40, true, 5),
      Candidate("big-old", 40, true, 3),
      Candidate("middle", 20, true, 4),
      Candidate("running", 500, true, 6, kNow, 0, /*jobs=*/1),  // never while a job runs
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
      Candidate("expired", 50, false, 1, kNow - 10 * kSecondUsec, 5),
      Candidate("suspended", 60, true, 2),
  };
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 60, kNow)), std::vector<std::string>{"expired"});
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 59, kNow)), (std::vector<std::string>{"expired", "suspended"}));
}

GcCandidate OwnedBy(uid_t owner, GcCandidate candidate) {
  candidate.owner = owner;
  return candidate;
}

// The attack of issue 18: an attacker's active sandboxes fill the store past the cap; a victim's
// small suspended sandbox is not theirs to lose, because the victim is within their share.
TEST(GarbageCollectionTest, AUserWithinTheirShareLosesNothingToAnotherUsersSpace) {
  std::vector<GcCandidate> sandboxes = {OwnedBy(1001, Candidate("attacker-active", 800, false, 1)),
                                        OwnedBy(1002, Candidate("victim-suspended", 20, true, 2))};
  EXPECT_TRUE(ChooseGarbage(sandboxes, 600, kNow).empty());
}

// Over the cap, only users over their share (the cap split evenly between the users who have
// sandboxes) give up suspended sandboxes, largest first, and only until they are within it or
// the total is under the cap; the reason names the user, their use and their share.
TEST(GarbageCollectionTest, OnlyUsersOverTheirShareGiveUpTheirLargestSuspendedSandboxes) {
  std::vector<GcCandidate> sandboxes = {OwnedBy(1001, Candidate("a-active", 500, false, 1)),
                                        OwnedBy(1001, Candidate("a-small", 100, true, 2)),
                                        OwnedBy(1001, Candidate("a-large", 300, true, 3)),
                                        OwnedBy(1002, Candidate("b-suspended", 250, true, 4))};
  // Total 1150, cap 600: shares of 300. a holds 900: its largest suspended one goes (850 left,
  // still over the cap), then its next (750); a is still over its share but has nothing more to
  // give; b (250) is within its share and keeps everything.
  auto removals = ChooseGarbage(sandboxes, 600, kNow);
  EXPECT_EQ(Ids(removals), (std::vector<std::string>{"a-large", "a-small"}));
  ASSERT_FALSE(removals.empty());
  EXPECT_EQ(removals[0].why,
            "the sandboxes together (1150 bytes) were over the storage cap of 600 bytes, and uid 1001 held 900 bytes, over its share of "
            "300 bytes (the cap split between 2 users); it was that user's largest suspended sandbox");
  // A user over their share stops giving once the total is within the cap.
  EXPECT_EQ(Ids(ChooseGarbage(sandboxes, 850, kNow)), std::vector<std::string>{"a-large"});
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
