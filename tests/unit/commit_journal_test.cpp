// The commit journal a page at a time: what a commit of a million entries reads and writes
// instead of holding its steps, and the planning state a refused or cut-off commit leaves.

#include "commit/commit_journal.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "base/errors.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

class CommitJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    store_ = std::make_unique<Store>(dir_ / "db");
    store_->Insert({"00000000000000aa", "proj", 1000, SandboxState::kActive, 5, {"/home/u/proj"}});
    journal_ = std::make_unique<CommitJournal>(*store_);
  }

  static std::vector<CommitStep> Steps(size_t first, size_t count) {
    std::vector<CommitStep> steps;
    for (size_t seq = first; seq < first + count; ++seq) {
      CommitStep step;
      step.seq = seq;
      step.path = "d/f" + std::to_string(seq);
      step.action = seq % 3 == 0 ? StepAction::kRemove : StepAction::kPlace;
      step.old_ino = seq + 100;
      step.new_ino = seq + 200;
      steps.push_back(step);
    }
    return steps;
  }

  /// The seqs of the steps as `ForEachStepPage` hands them out, page by page.
  std::vector<std::vector<size_t>> Pages(int64_t commit, bool reverse, size_t page) {
    std::vector<std::vector<size_t>> pages;
    journal_->ForEachStepPage(commit, reverse, page, [&](const std::vector<CommitStep>& steps) {
      pages.emplace_back();
      for (const auto& step : steps) pages.back().push_back(step.seq);
    });
    return pages;
  }

  testing::ScopedTempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CommitJournal> journal_;
};

TEST_F(CommitJournalTest, StepsWrittenInPagesComeBackWholeInOrderAndInReverse) {
  int64_t commit = journal_->BeginPlanning("00000000000000aa", false);
  journal_->AppendSteps(commit, Steps(0, 4));
  journal_->AppendSteps(commit, Steps(4, 3));
  EXPECT_EQ(Pages(commit, false, 3), (std::vector<std::vector<size_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  // Back: the last page first, each page in order (the helper runs a page back from its end).
  EXPECT_EQ(Pages(commit, true, 3), (std::vector<std::vector<size_t>>{{4, 5, 6}, {1, 2, 3}, {0}}));
  // A last page that is full is followed by nothing.
  EXPECT_EQ(Pages(commit, false, 7), (std::vector<std::vector<size_t>>{{0, 1, 2, 3, 4, 5, 6}}));
  EXPECT_EQ(Pages(commit, true, 1).size(), 7u);
  std::vector<CommitStep> read;
  journal_->ForEachStepPage(commit, false, 2, [&](const std::vector<CommitStep>& steps) { read.insert(read.end(), steps.begin(), steps.end()); });
  EXPECT_EQ(read, Steps(0, 7));
  EXPECT_TRUE(Pages(journal_->BeginPlanning("00000000000000aa", false), false, 3).empty());
}

TEST_F(CommitJournalTest, APlanningCommitIsUnfinishedUntilAppliedAndAbandonedWithoutATrace) {
  int64_t commit = journal_->BeginPlanning("00000000000000aa", true);
  journal_->AppendSteps(commit, Steps(0, 5));
  auto unfinished = journal_->Unfinished("00000000000000aa");
  ASSERT_EQ(unfinished.size(), 1u);
  EXPECT_EQ(unfinished[0].state, CommitState::kPlanning);
  journal_->Abandon(commit);
  EXPECT_FALSE(journal_->StateOf(commit));
  EXPECT_TRUE(Pages(commit, false, 10).empty());
  EXPECT_TRUE(journal_->Unfinished("00000000000000aa").empty());

  // Once applying, a commit may have moved entries: abandoning it is refused (it stays).
  int64_t applying = journal_->BeginPlanning("00000000000000aa", false);
  journal_->AppendSteps(applying, Steps(0, 2));
  journal_->SetState(applying, CommitState::kApplying);
  journal_->Abandon(applying);
  EXPECT_EQ(journal_->StateOf(applying), CommitState::kApplying);
  EXPECT_EQ(Pages(applying, false, 10).size(), 1u);
}

// Recovery decides from the stored state alone: every state must come back as it was written.
TEST_F(CommitJournalTest, EveryStateComesBackAsItWasStored) {
  const CommitState all[] = {CommitState::kPlanning, CommitState::kStaging,   CommitState::kApplying, CommitState::kApplied,
                             CommitState::kDone,     CommitState::kRolledBack, CommitState::kImporting, CommitState::kUndoing,
                             CommitState::kReturning, CommitState::kUndone};
  std::set<std::string> names;
  int64_t commit = journal_->BeginPlanning("00000000000000aa", false);
  for (CommitState state : all) {
    EXPECT_NE(ToString(state), "unknown");
    names.insert(std::string(ToString(state)));
    journal_->SetState(commit, state);
    EXPECT_EQ(journal_->StateOf(commit), state) << ToString(state);
  }
  EXPECT_EQ(names.size(), std::size(all)) << "two states share a name";
}

// A journal holding a state this daemon does not know (a newer sandboxd's, or edited by hand):
// recovery stops with a message naming the commit, never guesses what was under way.
TEST_F(CommitJournalTest, AnUnknownStoredStateIsRefusedNamingTheCommit) {
  int64_t commit = journal_->BeginPlanning("00000000000000aa", false);
  store_->WithDatabase([&](Database& db) { Statement(db, "UPDATE commits SET state = 'merging' WHERE id = ?").Bind(1, commit).Run(); });
  for (const auto& read : std::vector<std::function<void()>>{[&] { journal_->Unfinished("00000000000000aa"); },
                                                             [&] { journal_->StateOf(commit); }}) {
    try {
      read();
      ADD_FAILURE() << "an unknown state was read back";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kFailed);
      EXPECT_NE(std::string(e.what()).find("commit " + std::to_string(commit) + " has the unknown state 'merging'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace sandboxd
