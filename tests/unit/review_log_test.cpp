// The review log (review/review_log.h): what the owner decided, with notes, and the reviews an
// agent asked for; a request is open until the owner's next act; the log stays bounded
// whatever a caller repeats, survives a reopened store, and goes with its sandbox.

#include "review/review_log.h"

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;

class ReviewLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_unique<Store>(dir_ / "db");
    store_->Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/r0"}});
    store_->Insert({"00000000000000bb", "other", 1000, SandboxState::kActive, 5, {"/r0"}});
    log_ = std::make_unique<ReviewLog>(*store_);
  }
  ScopedTempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ReviewLog> log_;
  const std::string a_ = "00000000000000aa", b_ = "00000000000000bb";
};

TEST_F(ReviewLogTest, EntriesComeBackNewestFirstWithTheirNotes) {
  log_->Add(a_, {.time_usec = 1, .act = ReviewAct::kReviewAsked, .note = "done with the parser"});
  log_->Add(a_, {.time_usec = 2, .act = ReviewAct::kRejected, .what = {"src/x.py", "run.sh:2"}, .note = "use pathlib"});
  log_->Add(a_, {.time_usec = 3, .act = ReviewAct::kApproved, .what = {"."}});
  log_->Add(b_, {.time_usec = 4, .act = ReviewAct::kDiscarded});
  auto entries = log_->Recent(a_, 10);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].act, ReviewAct::kApproved);
  EXPECT_EQ(entries[1].act, ReviewAct::kRejected);
  EXPECT_EQ(entries[1].what, (std::vector<std::string>{"src/x.py", "run.sh:2"}));
  EXPECT_EQ(entries[1].note, "use pathlib");
  EXPECT_EQ(entries[2].note, "done with the parser");
  EXPECT_EQ(log_->Recent(a_, 1).size(), 1u);
  EXPECT_EQ(log_->Recent(b_, 10).size(), 1u) << "one sandbox's log holds another's";
}

TEST_F(ReviewLogTest, ARequestIsOpenUntilTheOwnersNextAct) {
  EXPECT_FALSE(log_->OpenRequest(a_));
  log_->Add(a_, {.time_usec = 1, .act = ReviewAct::kReviewAsked, .note = "first"});
  log_->Add(a_, {.time_usec = 2, .act = ReviewAct::kReviewAsked, .note = "second"});
  ASSERT_TRUE(log_->OpenRequest(a_));
  EXPECT_EQ(log_->OpenRequest(a_)->note, "second");
  EXPECT_EQ(log_->OpenRequest(a_)->time_usec, 2);
  EXPECT_EQ(log_->Recent(a_, 10).size(), 1u) << "a request again while one waits takes its place";
  for (ReviewAct act : {ReviewAct::kApproved, ReviewAct::kRejected, ReviewAct::kCommitted, ReviewAct::kDiscarded}) {
    log_->Add(a_, {.time_usec = 3, .act = ReviewAct::kReviewAsked, .note = "again"});
    log_->Add(a_, {.time_usec = 4, .act = act});
    EXPECT_FALSE(log_->OpenRequest(a_)) << ToString(act) << " left the request open";
  }
  EXPECT_FALSE(log_->OpenRequest(b_));
}

// An agent that asks for a review in a loop cannot push the owner's notes out of the log.
TEST_F(ReviewLogTest, RequestsInALoopKeepTheOwnersNotes) {
  log_->Add(a_, {.time_usec = 1, .act = ReviewAct::kRejected, .what = {"x"}, .note = "use pathlib"});
  for (int i = 0; i < 1500; ++i) log_->Add(a_, {.time_usec = 2 + i, .act = ReviewAct::kReviewAsked, .what = {}, .note = std::to_string(i)});
  auto entries = log_->Recent(a_, ReviewLog::kKeptEntries);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].note, "1499");
  EXPECT_EQ(entries[1].note, "use pathlib");
}

TEST_F(ReviewLogTest, TheLogStaysBoundedAndAnEntryNamesAtMostAHundredSelectors) {
  for (size_t i = 0; i < ReviewLog::kKeptEntries + 50; ++i)
    log_->Add(a_, {.time_usec = static_cast<int64_t>(i), .act = ReviewAct::kApproved, .what = {}, .note = std::to_string(i)});
  auto entries = log_->Recent(a_, ReviewLog::kKeptEntries + 50);
  ASSERT_EQ(entries.size(), ReviewLog::kKeptEntries);
  EXPECT_EQ(entries.front().note, std::to_string(ReviewLog::kKeptEntries + 49));
  EXPECT_EQ(entries.back().note, "50");

  std::vector<std::string> many;
  for (int i = 0; i < 250; ++i) many.push_back("f" + std::to_string(i));
  log_->Add(b_, {.time_usec = 1, .act = ReviewAct::kApproved, .what = many});
  auto named = log_->Recent(b_, 1).at(0).what;
  ASSERT_EQ(named.size(), ReviewLog::kMaxWhat + 1);
  EXPECT_EQ(named.back(), "... and 150 more");
}

TEST_F(ReviewLogTest, ItSurvivesAReopenedStoreAndGoesWithItsSandbox) {
  log_->Add(a_, {.time_usec = 7, .act = ReviewAct::kRejected, .what = {"a"}, .note = "no"});
  log_.reset();
  store_ = std::make_unique<Store>(dir_ / "db");
  log_ = std::make_unique<ReviewLog>(*store_);
  auto entries = log_->Recent(a_, 10);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].note, "no");
  store_->Remove(a_);
  EXPECT_TRUE(log_->Recent(a_, 10).empty());
}

}  // namespace
}  // namespace sandboxd
