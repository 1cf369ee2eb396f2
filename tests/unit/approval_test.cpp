// Decisions about changes: whole and per hunk, how they combine, what a partial commit leaves,
// their persistence, and what a commit of them takes (implied directories, rejected parents).

#include "changes/approval.h"
#include "selectors_of.h"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <utility>

#include "base/errors.h"
#include "review/approval_store.h"
#include "review/review.h"
#include "sandbox/layout.h"
#include "sandbox/sandbox.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

TEST(ApprovalTest, HunkDecisionsSpreadAWholeDecisionAndCollapseWhenTheyAgree) {
  Approval approval;
  approval.DecideWhole(Verdict::kRejected);
  approval.DecideHunk(2, 3, Verdict::kApproved);
  EXPECT_EQ(approval.State(), ReviewState::kPartial);
  EXPECT_EQ(approval.ApprovedHunks(), (std::set<int>{2}));
  EXPECT_EQ(approval.HunksWith(Verdict::kRejected), (std::set<int>{1, 3}));
  EXPECT_TRUE(approval.CommitsPart());
  EXPECT_FALSE(approval.CommitsWhole());
  approval.DecideHunk(1, 3, Verdict::kApproved);
  approval.DecideHunk(3, 3, Verdict::kApproved);
  EXPECT_EQ(approval.State(), ReviewState::kApproved);
  EXPECT_TRUE(approval.hunks.empty());
  EXPECT_TRUE(approval.CommitsWhole());
}

TEST(ApprovalTest, APendingChangeDecidedHunkByHunkStartsFromPending) {
  Approval approval;
  approval.DecideHunk(1, 2, Verdict::kRejected);
  EXPECT_EQ(approval.State(), ReviewState::kPartial);
  EXPECT_FALSE(approval.CommitsPart());
  EXPECT_EQ(approval.HunksWith(Verdict::kPending), (std::set<int>{2}));
}

TEST(ApprovalTest, HunksLeftAfterAPartialCommitAreRenumberedInOrder) {
  Approval approval;
  approval.DecideHunk(1, 4, Verdict::kApproved);
  approval.DecideHunk(2, 4, Verdict::kRejected);
  approval.DecideHunk(3, 4, Verdict::kApproved);
  ASSERT_FALSE(SplitsWhatIsLeft(approval, approval.Approved()));
  Approval left = ApprovalLeft(approval, approval.Approved(), nullptr);
  EXPECT_EQ(left.hunks, (std::map<int, Verdict>{{1, Verdict::kRejected}, {2, Verdict::kPending}}));
  EXPECT_EQ(left.hunk_count, 2);
}

TEST(ApprovalTest, PartsSpreadTheirHunksDecisionAndCollapseWhenTheyAgree) {
  Approval approval;
  approval.DecideWhole(Verdict::kRejected);
  approval.DecidePart(2, 1, 3, 2, Verdict::kApproved);  // hunk 2 of 3, part 1 of 2
  EXPECT_EQ(approval.State(), ReviewState::kPartial);
  EXPECT_EQ(approval.SplitHunks(), (std::set<int>{2}));
  // A split hunk is neither approved nor rejected as a hunk.
  EXPECT_EQ(approval.HunksWith(Verdict::kRejected), (std::set<int>{1, 3}));
  EXPECT_TRUE(approval.ApprovedHunks().empty());
  EXPECT_EQ(approval.Approved(), (HunkPick{{}, {{2, {1}}}}));
  EXPECT_TRUE(approval.CommitsPart());
  EXPECT_FALSE(approval.CommitsAll());
  // The other part rejected: the parts agree, hunk 2 is rejected whole, and so is the change.
  approval.DecidePart(2, 1, 3, 2, Verdict::kRejected);
  EXPECT_EQ(approval.State(), ReviewState::kRejected);
  EXPECT_TRUE(approval.parts.empty());
  // Deciding the hunk whole drops its parts.
  approval.DecidePart(1, 2, 3, 2, Verdict::kApproved);
  approval.DecideHunk(1, 3, Verdict::kApproved);
  EXPECT_TRUE(approval.parts.empty());
  EXPECT_EQ(approval.ApprovedHunks(), (std::set<int>{1}));
}

TEST(ApprovalTest, CommitAllApprovesPendingPartsAndKeepsRejectedOnes) {
  Approval approval;
  approval.DecidePart(1, 2, 2, 3, Verdict::kRejected);  // hunk 1 of 2: parts pending, rejected, pending
  approval.ApprovePending();
  EXPECT_EQ(approval.Approved(), (HunkPick{{2}, {{1, {1, 3}}}}));
  EXPECT_FALSE(approval.CommitsAll());
}

TEST(ApprovalTest, WhatIsLeftOfAHunkTakenInPartFollowsTheShapeOfTheDiffLeft) {
  // Hunk 1 whole rejected; hunk 2 split into 4 parts: approved, rejected, approved, pending;
  // hunk 3 rejected.
  Approval approval;
  approval.DecideHunk(1, 3, Verdict::kRejected);
  approval.DecideHunk(3, 3, Verdict::kRejected);
  approval.DecidePart(2, 1, 3, 4, Verdict::kApproved);
  approval.DecidePart(2, 2, 3, 4, Verdict::kRejected);
  approval.DecidePart(2, 3, 3, 4, Verdict::kApproved);
  HunkPick taken = approval.Approved();
  ASSERT_EQ(taken, (HunkPick{{}, {{2, {1, 3}}}}));
  ASSERT_TRUE(SplitsWhatIsLeft(approval, taken));

  // The runs left of hunk 2 (rejected, pending) stay one hunk: it is split in two parts.
  std::vector<int> one_hunk{1, 2, 1};
  Approval left = ApprovalLeft(approval, taken, &one_hunk);
  EXPECT_EQ(left.hunk_count, 3);
  EXPECT_EQ(left.HunksWith(Verdict::kRejected), (std::set<int>{1, 3}));
  EXPECT_EQ(left.parts, (std::map<int, std::vector<Verdict>>{{2, {Verdict::kRejected, Verdict::kPending}}}));

  // Now far enough apart to be two hunks: each decided whole.
  std::vector<int> two_hunks{1, 1, 1, 1};
  left = ApprovalLeft(approval, taken, &two_hunks);
  EXPECT_EQ(left.hunk_count, 4);
  EXPECT_TRUE(left.parts.empty());
  EXPECT_EQ(left.HunksWith(Verdict::kRejected), (std::set<int>{1, 2, 4}));
  EXPECT_EQ(left.HunksWith(Verdict::kPending), (std::set<int>{3}));

  // A shape that does not fit (or none): never approved; rejected since something was.
  const std::vector<int> misfit{1, 3, 1};
  for (const std::vector<int>* shape : {static_cast<const std::vector<int>*>(nullptr), &misfit}) {
    left = ApprovalLeft(approval, taken, shape);
    EXPECT_EQ(left.State(), ReviewState::kRejected);
  }
}

class ApprovalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    store_ = std::make_unique<Store>(dir_ / "db");
    store_->Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/home/u/proj"}});
  }
  testing::ScopedTempDir dir_;
  std::unique_ptr<Store> store_;
};

Approval Decision(const std::string& path, const std::string& fingerprint) {
  Approval approval;
  approval.path = path;
  approval.fingerprint = fingerprint;
  return approval;
}

TEST_F(ApprovalStoreTest, DecisionsRoundTripAndPendingOnesLeaveNoRow) {
  ApprovalStore approvals(*store_);
  Approval whole = Decision("a.txt", "fp-a");
  whole.DecideWhole(Verdict::kApproved);
  Approval part = Decision("b.txt", "fp-b");
  part.DecideHunk(2, 3, Verdict::kApproved);
  part.DecideHunk(3, 3, Verdict::kRejected);
  part.DecidePart(1, 2, 3, 3, Verdict::kRejected);
  approvals.Save("00000000000000aa", {whole, part});
  auto loaded = approvals.Load("00000000000000aa");
  ASSERT_EQ(loaded.size(), 2u);
  const Approval& b = loaded[0].path == "b.txt" ? loaded[0] : loaded[1];
  EXPECT_EQ(b.fingerprint, "fp-b");
  EXPECT_EQ(b.hunk_count, 3);
  EXPECT_EQ(b.hunks, part.hunks);
  EXPECT_EQ(b.parts, part.parts);  // split hunks survive a restart

  whole.DecideWhole(Verdict::kPending);
  approvals.Save("00000000000000aa", {whole});
  EXPECT_EQ(approvals.Load("00000000000000aa").size(), 1u);
  approvals.Forget("00000000000000aa", {{0, "b.txt"}});
  EXPECT_TRUE(approvals.Load("00000000000000aa").empty());
}

TEST_F(ApprovalStoreTest, PartnersAndDecisionsWaitingForACommitRoundTrip) {
  ApprovalStore approvals(*store_);
  Approval moved = Decision("new.c", "fp");
  moved.partner = "old.c";
  moved.DecideWhole(Verdict::kApproved);
  approvals.Save("00000000000000aa", {moved});
  ASSERT_EQ(approvals.Load("00000000000000aa").size(), 1u);
  EXPECT_EQ(approvals.Load("00000000000000aa")[0].partner, "old.c");

  Approval left = Decision("b.txt", "");
  left.DecideHunk(1, 2, Verdict::kRejected);
  left.DecidePart(2, 2, 2, 2, Verdict::kRejected);
  approvals.SaveAfterCommit("00000000000000aa", 7, {left});
  EXPECT_EQ(approvals.CommitsAwaited("00000000000000aa"), std::vector<int64_t>{7});
  auto taken = approvals.AfterCommitOf("00000000000000aa", 7);
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].hunks, left.hunks);
  EXPECT_EQ(taken[0].parts, left.parts);
  EXPECT_EQ(taken[0].hunk_count, 2);
  EXPECT_EQ(approvals.CommitsAwaited("00000000000000aa"), std::vector<int64_t>{7}) << "read, not forgotten";
  taken[0].fingerprint = "fp";
  approvals.SettleAfterCommit("00000000000000aa", 7, taken);
  EXPECT_TRUE(approvals.CommitsAwaited("00000000000000aa").empty());  // settled once
  auto kept = approvals.Load("00000000000000aa");
  ASSERT_EQ(kept.size(), 2u);  // "moved" and what is left of b.txt
  EXPECT_EQ(kept[1].path == "b.txt" ? kept[1].hunks : kept[0].hunks, left.hunks);
}

TEST_F(ApprovalStoreTest, DecisionsGoWithTheirSandbox) {
  ApprovalStore approvals(*store_);
  Approval whole = Decision("a.txt", "fp");
  whole.DecideWhole(Verdict::kRejected);
  approvals.Save("00000000000000aa", {whole});
  store_->Remove("00000000000000aa");
  EXPECT_TRUE(approvals.Load("00000000000000aa").empty());
}

ReviewedChange Reviewed(const std::string& path, ChangeKind kind, EntryType type, Verdict verdict) {
  ReviewedChange item;
  item.change.path = path;
  item.change.kind = kind;
  item.change.new_type = type;
  item.change.new_mode = 0644;
  item.approval.path = path;
  item.approval.DecideWhole(verdict);
  return item;
}

TEST(ReviewSelectionTest, AnApprovedFileTakesTheNewDirectoriesAboveIt) {
  Layout layout("/nonexistent/state", "/nonexistent/run");
  Sandbox sandbox({"00000000000000aa", "p", 1000, SandboxState::kActive, 0, {"/p"}}, layout);
  std::vector<ReviewedChange> reviewed = {
      Reviewed("d", ChangeKind::kAdded, EntryType::kDirectory, Verdict::kPending),
      Reviewed("d/e", ChangeKind::kAdded, EntryType::kDirectory, Verdict::kPending),
      Reviewed("d/e/x", ChangeKind::kAdded, EntryType::kFile, Verdict::kApproved),
      Reviewed("d/y", ChangeKind::kAdded, EntryType::kFile, Verdict::kPending),
      Reviewed("z", ChangeKind::kModified, EntryType::kFile, Verdict::kRejected),
  };
  CommitSelection request = Review::Selection(sandbox, reviewed);
  ASSERT_EQ(request.changes.size(), 1u);
  std::vector<std::string> paths;
  for (const auto& change : request.changes[0].changes) paths.push_back(change.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"d", "d/e", "d/e/x"}));
  EXPECT_FALSE(request.everything);

  reviewed[1].approval.DecideWhole(Verdict::kRejected);
  EXPECT_THROW(Review::Selection(sandbox, reviewed), Error);
}

TEST(ReviewSelectionTest, SelectorsNarrowAndMustNameSomething) {
  Layout layout("/nonexistent/state", "/nonexistent/run");
  Sandbox sandbox({"00000000000000aa", "p", 1000, SandboxState::kActive, 0, {"/p"}}, layout);
  std::vector<ReviewedChange> reviewed = {
      Reviewed("a", ChangeKind::kModified, EntryType::kFile, Verdict::kApproved),
      Reviewed("b", ChangeKind::kModified, EntryType::kFile, Verdict::kApproved),
  };
  EXPECT_TRUE(Review::Selection(sandbox, reviewed).everything);
  CommitSelection only_b = Review::Selection(sandbox, reviewed, SelectorsOf({"b"}));
  ASSERT_EQ(only_b.changes.size(), 1u);
  ASSERT_EQ(only_b.changes[0].changes.size(), 1u);
  EXPECT_EQ(only_b.changes[0].changes[0].path, "b");
  EXPECT_FALSE(only_b.everything);
  try {
    Review::Selection(sandbox, reviewed, SelectorsOf({"c"}));
    FAIL() << "a selector naming nothing was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos);
  }
}

// The outlook a commit takes in one streamed pass says "the whole change set" only when the
// selection made from the change set held whole says so too: a commit of the whole upper must
// never take what the owner did not approve. Random change sets with renames, partial hunk
// decisions, rejections, selectors and --all, against Selection after ApprovePending.
TEST(ReviewSelectionTest, TheStreamedOutlookTakesTheWholeChangeSetOnlyWhenTheSelectionDoes) {
  Layout layout("/nonexistent/state", "/nonexistent/run");
  Sandbox sandbox({"00000000000000aa", "p", 1000, SandboxState::kActive, 0, {"/p"}}, layout);
  std::mt19937 random(19);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  const std::vector<std::string> names = {"a", "b", "d", "d/x", "d/y", "e", "s"};
  int wholes = 0, partials = 0;
  for (int round = 0; round < 20000; ++round) {
    std::vector<ReviewedChange> reviewed;
    for (const auto& name : names) {
      if (pick(3) == 0) continue;
      ReviewedChange item;
      item.change.path = name;
      item.approval.path = name;
      if (name == "d") {
        item.change.kind = ChangeKind::kAdded;
        item.change.new_type = EntryType::kDirectory;
      } else if (name == "s") {
        item.change.kind = ChangeKind::kAdded;
        item.change.new_type = pick(4) == 0 ? EntryType::kSocket : EntryType::kFile;
      } else {
        item.change.kind = std::vector<ChangeKind>{ChangeKind::kAdded, ChangeKind::kModified, ChangeKind::kDeleted}[pick(3)];
        item.change.old_type = item.change.kind == ChangeKind::kAdded ? EntryType::kNone : EntryType::kFile;
        item.change.new_type = item.change.kind == ChangeKind::kDeleted ? EntryType::kNone : EntryType::kFile;
      }
      // Now and then a file its owner cannot read: --all approves it only when named.
      if (item.change.new_type == EntryType::kFile) item.change.new_mode = pick(6) == 0 ? 0200 : 0644;
      Verdict verdict = std::vector<Verdict>{Verdict::kPending, Verdict::kApproved, Verdict::kApproved, Verdict::kRejected}[pick(4)];
      if (item.change.kind == ChangeKind::kModified && pick(3) == 0) {
        item.approval.DecideHunk(1, 3, verdict);
        item.approval.DecideHunk(1 + pick(3), 3, std::vector<Verdict>{Verdict::kPending, Verdict::kApproved, Verdict::kRejected}[pick(3)]);
      } else {
        item.approval.DecideWhole(verdict);
      }
      reviewed.push_back(std::move(item));
    }
    if (reviewed.empty()) continue;
    // A rename pairs a deletion with an addition; its halves hold one decision.
    for (auto& deleted : reviewed) {
      if (deleted.change.kind != ChangeKind::kDeleted || pick(2) == 0) continue;
      for (auto& added : reviewed) {
        if (added.change.kind != ChangeKind::kAdded || added.change.new_type != EntryType::kFile || !added.renamed_from.empty()) continue;
        deleted.renamed_to = added.change.path;
        added.renamed_from = deleted.change.path;
        added.approval = deleted.approval;
        added.approval.path = added.change.path;
        break;
      }
    }
    std::vector<api::Selector> selectors;
    for (const auto& name : {"a", "b", "d", "d/x", "e", "s", "zz"})
      if (pick(6) == 0) selectors.push_back(api::Selector{name});
    bool approve_pending = pick(2) == 0;

    std::optional<CommitSelection> selection;
    Code refused = Code::kFailed;
    try {
      selection = Review::Selection(sandbox, reviewed, selectors, approve_pending);
    } catch (const Error& e) {
      refused = e.code();
    }
    OutlookTally tally(sandbox, selectors, approve_pending);
    for (const auto& item : reviewed) tally.Add(item);
    try {
      CommitOutlook outlook = tally.Finish();
      ASSERT_NE(refused, Code::kNotFound) << "round " << round << ": the outlook took a selector that names nothing";
      EXPECT_EQ(outlook.changes, reviewed.size());
      if (outlook.everything) {
        ASSERT_TRUE(selection && selection->everything) << "round " << round << ": the outlook takes the whole change set, the selection does not";
        ++wholes;
        size_t renames = 0;
        for (const auto& item : reviewed) renames += !item.renamed_from.empty();
        EXPECT_EQ(outlook.renames.size(), renames);
        EXPECT_EQ(outlook.renames, selection->renames);
      } else if (selection && selection->everything) {
        ++partials;  // (a pending new directory taken for the approved file in it: a stage does it)
      }
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kNotFound);
      // (The selection may name a rejected directory a taken file needs first.)
      EXPECT_TRUE(refused == Code::kNotFound || refused == Code::kInvalidArgument) << "round " << round << ": only the outlook refused a selector";
    }
  }
  // Both answers come up often enough for the comparison to mean something.
  EXPECT_GT(wholes, 500);
  EXPECT_LT(partials, wholes / 4);
}

}  // namespace
}  // namespace sandboxd
