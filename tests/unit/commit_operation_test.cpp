// The owner's review carried into the live tree: decisions (decide_operation.h) and commit and
// undo whole (commit_operation.h) over the review, the commit runner and the helpers' own
// operations (forked_helpers.h), on a sandbox whose overlays are recorded, as nobody when the
// binary is root. What must hold: only what the owner approved goes live (a file's approved
// hunks without the others); a commit the owner may not make moves nothing and loses no
// decision; the sandbox is set up again whichever way a commit ends; an undo gives the live
// tree back.

#include "operations/commit_operation.h"
#include "selectors_of.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "base/errors.h"
#include "commit/commit_runner.h"
#include "forked_helpers.h"
#include "operations/decide_operation.h"
#include "review/review.h"
#include "review/review_log.h"
#include "sandbox/live_sight.h"
#include "sandbox_world.h"

namespace sandboxd {
namespace {

using testing::Exists;
using testing::ForkedHelpers;
using testing::ReadFile;
using testing::WriteFile;

constexpr const char* kLiveText = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n";
/// Two hunks: line 2 and line 19 changed, far enough apart to stay apart.
constexpr const char* kSandboxText = "1\ntwo\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\nnineteen\n20\n";

class CommitOperationTest : public testing::SandboxWorldTest {
 protected:
  void SetUp() override {
    if (!testing::kStartedAsRoot) GTEST_SKIP() << "needs root: a commit's helper takes the owner's identity, which only root can";
    MakeDirectory(live_, 0755);
    WriteFile(live_ + "/a.txt", "live a\n");
    WriteFile(live_ + "/lines.txt", kLiveText);
    CreateRequest request;
    request.roots = {live_};
    sandbox_ = Create(request);
    WriteFile(sandbox_->paths().UpperDir(0) + "/a.txt", "sandbox a\n");
    WriteFile(sandbox_->paths().UpperDir(0) + "/c.txt", "sandbox c\n");
    WriteFile(sandbox_->paths().UpperDir(0) + "/lines.txt", kSandboxText);
  }

  size_t Decide(const std::vector<std::string>& selectors, Verdict verdict) {
    return DecideChanges(parts_, *sandbox_, SelectorsOf(selectors), false, verdict);
  }

  std::map<std::string, Verdict> Decisions() {
    std::map<std::string, Verdict> decisions;
    for (const auto& item : review_.Current(*sandbox_)) decisions[item.change.path] = item.approval.whole;
    return decisions;
  }

  const std::string live_ = temp_ / "live";
  CommitJournal journal_{store_};
  SightStore sights_{store_};
  ApprovalStore approvals_{store_};
  Review review_{approvals_};
  ForkedHelpers helpers_;
  CommitRunner commits_{layout_, journal_, sights_, helpers_};
  ReviewLog review_log_{store_};
  OperationParts parts_{review_, commits_, journal_, sights_, helpers_, review_log_};
  std::shared_ptr<Sandbox> sandbox_;
};

TEST_F(CommitOperationTest, OnlyWhatTheOwnerApprovedGoesLiveAndAnUndoTakesItBack) {
  EXPECT_EQ(Decide({"a.txt"}, Verdict::kApproved), 1u);
  EXPECT_EQ(Decide({"c.txt"}, Verdict::kRejected), 1u);
  EXPECT_EQ(Decide({"lines.txt:1"}, Verdict::kApproved), 1u) << "hunks are counted by the helper";
  size_t asked = 0;
  Committed committed = CommitChanges(parts_, *sandbox_, {}, [&](size_t changes) { asked = changes; });
  EXPECT_EQ(asked, 3u) << "the question names the change set";
  EXPECT_EQ(committed.committed, 2u);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "sandbox a\n");
  EXPECT_FALSE(Exists(live_ + "/c.txt")) << "a rejected change went live";
  std::string merged = kLiveText;
  merged.replace(merged.find("2\n"), 2, "two\n");
  EXPECT_EQ(ReadFile(live_ + "/lines.txt"), merged) << "more or less than the approved hunk went live";
  // The rest waits in the sandbox, decided as it was.
  EXPECT_EQ(ReadFile(sandbox_->paths().UpperDir(0) + "/lines.txt"), kSandboxText);
  EXPECT_EQ(Decisions().at("c.txt"), Verdict::kRejected);
  EXPECT_FALSE(Decisions().count("a.txt"));
  EXPECT_TRUE(mounts_.IsMounted(sandbox_->paths().MergedDir(0))) << "the sandbox was not set up again after its commit";

  UndoLastCommit(parts_, *sandbox_);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n");
  EXPECT_EQ(ReadFile(live_ + "/lines.txt"), kLiveText);
  EXPECT_EQ(ReadFile(sandbox_->paths().UpperDir(0) + "/a.txt"), "sandbox a\n");
  EXPECT_TRUE(mounts_.IsMounted(sandbox_->paths().MergedDir(0)));
}

TEST_F(CommitOperationTest, ACommitTheOwnerMayNotMakeMovesNothingAndLosesNoDecision) {
  Decide({"a.txt"}, Verdict::kApproved);
  Decide({"c.txt"}, Verdict::kRejected);
  auto before = Decisions();
  EXPECT_THROW(CommitChanges(parts_, *sandbox_, {}, [](size_t) { throw Error(Code::kAccessDenied, "not authorized"); }), Error);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n");
  EXPECT_EQ(Decisions(), before);
  EXPECT_TRUE(mounts_.IsMounted(sandbox_->paths().MergedDir(0))) << "a refused commit left the sandbox unmounted";
  EXPECT_EQ(helpers_.Runs(HelperOp::kSteps), 0);
  EXPECT_TRUE(journal_.Unfinished(sandbox_->id()).empty());
}

TEST_F(CommitOperationTest, NothingApprovedTouchesNothingLiveAndAsksNoOne) {
  bool asked = false;
  Committed committed = CommitChanges(parts_, *sandbox_, {}, [&](size_t) { asked = true; });
  EXPECT_EQ(committed.committed, 0u);
  EXPECT_FALSE(asked);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n");
  EXPECT_TRUE(mounts_.IsMounted(sandbox_->paths().MergedDir(0)));
}

}  // namespace
}  // namespace sandboxd
