// Suspend and resume (suspension.h) of a sandbox whose overlays are recorded
// (recorded_mounts.h), with the real archive helper, as nobody when the binary is root. What
// must hold: the changes and the owner's decisions come back as they were, across a restart
// while suspended; a suspend cut off before it was recorded done is taken back at start-up
// with nothing lost.

#include "lifecycle/suspension.h"
#include "selectors_of.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "review/review.h"
#include "sandbox_world.h"
#include "built_program.h"

namespace sandboxd {
namespace {

using testing::Exists;
using testing::ReadFile;
using testing::WriteFile;

class SuspensionTest : public testing::SandboxWorldTest {
 protected:
  void SetUp() override {
    if (access(testing::ArchiveHelperProgram().c_str(), X_OK) != 0) GTEST_SKIP() << "no sandboxd-archive-helper at " << testing::ArchiveHelperProgram();
    MakeDirectory(live_, 0755);
    WriteFile(live_ + "/a.txt", "live a\n");
    CreateRequest request;
    request.roots = {live_};
    request.name = "calc";
    sandbox_ = Create(request);
    // A job's work: a changed file and a new one; the owner approves one and rejects the other.
    WriteFile(sandbox_->paths().UpperDir(0) + "/a.txt", "sandbox a\n");
    WriteFile(sandbox_->paths().UpperDir(0) + "/c.txt", "sandbox c\n");
    auto whole = [](const std::vector<RootChanges>& asked, bool) {
      HunkCounts counts;
      for (const auto& root : asked)
        for (const auto& change : root.changes) counts[{root.root, change.path}] = HunkShape{};
      return counts;
    };
    review_.Decide(*sandbox_, SelectorsOf({"a.txt"}), false, Verdict::kApproved, whole);
    review_.Decide(*sandbox_, SelectorsOf({"c.txt"}), false, Verdict::kRejected, whole);
    decided_ = Decisions(*sandbox_);
  }

  /// Each change's path and the decision that holds for it.
  std::map<std::string, Verdict> Decisions(const Sandbox& sandbox) {
    std::map<std::string, Verdict> decisions;
    for (const auto& item : review_.Current(sandbox)) decisions[item.change.path] = item.approval.whole;
    return decisions;
  }

  const std::string live_ = temp_ / "live";
  ApprovalStore approvals_{store_};
  Review review_{approvals_};
  Suspension suspension_{store_, approvals_, 3, ArchiveHelper(testing::ArchiveHelperProgram())};
  std::shared_ptr<Sandbox> sandbox_;
  std::map<std::string, Verdict> decided_;
};

TEST_F(SuspensionTest, ChangesAndDecisionsComeBackAcrossARestartWhileSuspended) {
  ASSERT_EQ(decided_, (std::map<std::string, Verdict>{{"a.txt", Verdict::kApproved}, {"c.txt", Verdict::kRejected}}));
  EXPECT_GT(suspension_.Suspend(*sandbox_), 0u);
  registry_.EmptyTrash();
  EXPECT_EQ(sandbox_->gate().state(), SandboxState::kSuspended);
  EXPECT_FALSE(Exists(sandbox_->paths().UpperDir(0) + "/c.txt")) << "the layers stayed beside the archive";
  EXPECT_FALSE(mounts_.IsMounted(sandbox_->paths().MergedDir(0)));
  // A restart while suspended: the registry loads it again from the store, still suspended.
  SandboxRegistry restarted(layout_, store_);
  ASSERT_TRUE(restarted.Recover([&](Sandbox& sandbox) { EXPECT_EQ(suspension_.Recover(sandbox), ""); }).empty());
  auto again = restarted.FindById(sandbox_->id());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->gate().state(), SandboxState::kSuspended);
  suspension_.Resume(*again);
  EXPECT_EQ(again->gate().state(), SandboxState::kActive);
  EXPECT_EQ(ReadFile(again->paths().UpperDir(0) + "/a.txt"), "sandbox a\n");
  EXPECT_EQ(ReadFile(again->paths().UpperDir(0) + "/c.txt"), "sandbox c\n");
  EXPECT_TRUE(mounts_.IsMounted(again->paths().MergedDir(0)));
  EXPECT_EQ(Decisions(*again), decided_) << "a decision was dropped or changed by suspend and resume";
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n");
}

TEST_F(SuspensionTest, ASuspendCutOffBeforeItWasDoneIsTakenBackWithNothingLost) {
  // As a daemon killed just after recording "suspending": the layers are whole, no archive yet.
  sandbox_->Unmount();
  store_.SetState(sandbox_->id(), SandboxState::kSuspending);
  SandboxRegistry restarted(layout_, store_);
  std::string line;
  ASSERT_TRUE(restarted.Recover([&](Sandbox& sandbox) { line = suspension_.Recover(sandbox); }).empty());
  EXPECT_NE(line, "") << "recovery said nothing of the suspend it settled";
  auto again = restarted.FindById(sandbox_->id());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->gate().state(), SandboxState::kActive);
  EXPECT_EQ(ReadFile(again->paths().UpperDir(0) + "/c.txt"), "sandbox c\n");
  EXPECT_EQ(Decisions(*again), decided_);
  EXPECT_EQ(store_.LoadAll().at(0).state, SandboxState::kActive);
}

}  // namespace
}  // namespace sandboxd
