// CommitRunner with its helpers forked from the test (forked_helpers.h) instead of
// sandboxd-helper exec'd as the owner: a sandbox whose layers are plain directories, owned by
// the test's user (nobody, when the binary is root: unprivileged.h), committed and undone
// without privilege, a mount or a bus. What must hold: a
// commit puts every change it takes live and nothing else, all or nothing; a conflict refuses
// it before anything moves; an undo gives the live tree back as it was.

#include "commit/commit_runner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "base/errors.h"
#include "forked_helpers.h"
#include "sandbox/live_sight.h"
#include "sandbox_world.h"

namespace sandboxd {
namespace {

using testing::Exists;
using testing::ForkedHelpers;
using testing::ReadFile;
using testing::WriteFile;

int64_t NowUsec() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class CommitRunnerTest : public testing::SandboxWorldTest {
 protected:
  void SetUp() override {
    if (!testing::kStartedAsRoot) GTEST_SKIP() << "needs root: a commit's helper takes the owner's identity, which only root can";
    MakeDirectory(live_, 0755);
    WriteFile(live_ + "/a.txt", "live a\n");
    WriteFile(live_ + "/b.txt", "live b\n");
    MakeDirectory(live_ + "/ro", 0555);
    // The sandbox agreed with the live tree from here on: a live change after this that no job
    // saw is a conflict.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    SandboxRecord record{"00000000000000c1", "c", geteuid(), SandboxState::kActive, NowUsec(), {live_}};
    store_.Insert(record);
    sandbox_ = std::make_unique<Sandbox>(record, layout_);
    // As the live root's, or the root itself would be a change (of its mode).
    MakeDirectories(sandbox_->paths().UpperDir(0), 0755);
    MakeDirectories(sandbox_->paths().WorkDir(0), 0700);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  void TearDown() override {
    // Read-only directories, the test's own: writable again, so that the temp dir goes.
    std::string command = "chmod -R u+w '" + temp_.path() + "'";
    if (std::system(command.c_str()) != 0) ADD_FAILURE() << "cannot make " << temp_.path() << " writable";
  }

  /// What a job would leave in the upper: a.txt changed, c.txt and d/e.txt made.
  void MakeChanges() {
    const std::string upper = sandbox_->paths().UpperDir(0);
    WriteFile(upper + "/a.txt", "sandbox a\n");
    WriteFile(upper + "/c.txt", "sandbox c\n");
    MakeDirectory(upper + "/d", 0755);
    WriteFile(upper + "/d/e.txt", "sandbox e\n");
  }

  /// A commit of the changes at `paths`, whole, as Review::StreamTaken hands them.
  CommitRequest Taking(const std::vector<std::string>& paths) {
    CommitRequest request;
    std::vector<Change> changes = sandbox_->Scan().at(0).changes;
    request.taken = [changes, paths](const std::function<void(TakenChange&&)>& take) {
      for (const auto& change : changes)
        if (std::find(paths.begin(), paths.end(), change.path) != paths.end()) take({0, change, {}, {}});
      return TakenRenames{};
    };
    return request;
  }

  const std::string live_ = temp_ / "live";
  CommitJournal journal_{store_};
  SightStore sights_{store_};
  ForkedHelpers helpers_;
  CommitRunner runner_{layout_, journal_, sights_, helpers_};
  std::unique_ptr<Sandbox> sandbox_;
};

TEST_F(CommitRunnerTest, AWholeCommitPutsEveryChangeLiveAndAnUndoTakesItBack) {
  MakeChanges();
  CommitRequest request;
  request.whole_upper = true;
  ASSERT_TRUE(CommitRunner::TakesWholeUpper(*sandbox_));
  int64_t journaled = 0;
  auto outcome = runner_.Commit(*sandbox_, request, [&](int64_t commit) { journaled = commit; });
  EXPECT_EQ(outcome.committed, 4u);  // a.txt, c.txt, d, d/e.txt
  EXPECT_GT(journaled, 0);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "sandbox a\n");
  EXPECT_EQ(ReadFile(live_ + "/b.txt"), "live b\n");
  EXPECT_EQ(ReadFile(live_ + "/c.txt"), "sandbox c\n");
  EXPECT_EQ(ReadFile(live_ + "/d/e.txt"), "sandbox e\n");
  EXPECT_GE(helpers_.Runs(HelperOp::kSteps), 1) << "the moves were not the helper's";
  EXPECT_TRUE(journal_.Unfinished(sandbox_->id()).empty());

  MakeDirectories(sandbox_->paths().UpperDir(0), 0755);  // SetUp's part after a whole commit: a new upper
  auto undone = runner_.Undo(*sandbox_);
  EXPECT_EQ(undone.commit, journaled);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n");
  EXPECT_FALSE(Exists(live_ + "/c.txt"));
  EXPECT_FALSE(Exists(live_ + "/d"));
  // And what it committed is the sandbox's again.
  EXPECT_EQ(ReadFile(sandbox_->paths().UpperDir(0) + "/c.txt"), "sandbox c\n");
}

TEST_F(CommitRunnerTest, APartialCommitTakesOnlyWhatItNames) {
  MakeChanges();
  auto outcome = runner_.Commit(*sandbox_, Taking({"c.txt"}));
  EXPECT_EQ(outcome.committed, 1u);
  EXPECT_EQ(ReadFile(live_ + "/c.txt"), "sandbox c\n");
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n") << "a change the commit did not take went live";
  EXPECT_FALSE(Exists(live_ + "/d"));
  // The rest stays in the sandbox, to be reviewed and committed later.
  EXPECT_EQ(ReadFile(sandbox_->paths().UpperDir(0) + "/a.txt"), "sandbox a\n");
  EXPECT_FALSE(Exists(sandbox_->paths().UpperDir(0) + "/c.txt"));
}

TEST_F(CommitRunnerTest, ALiveChangeNoJobSawRefusesTheCommitBeforeAnythingMoves) {
  MakeChanges();
  WriteFile(live_ + "/a.txt", "changed live meanwhile\n");
  CommitRequest request;
  request.whole_upper = true;
  try {
    runner_.Commit(*sandbox_, request);
    FAIL() << "a commit over a live change no job saw went through";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kConflict) << e.what();
    EXPECT_NE(std::string(e.what()).find("a.txt"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "changed live meanwhile\n");
  EXPECT_FALSE(Exists(live_ + "/c.txt")) << "a refused commit moved something";
  EXPECT_EQ(ReadFile(sandbox_->paths().UpperDir(0) + "/c.txt"), "sandbox c\n");
  EXPECT_EQ(helpers_.Runs(HelperOp::kSteps), 0);
  // Forced, it goes through.
  request.force = true;
  runner_.Commit(*sandbox_, request);
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "sandbox a\n");
}

TEST_F(CommitRunnerTest, AStepTheOwnerCannotTakeRollsTheWholeCommitBack) {
  MakeChanges();
  // ro/ is live from before the sandbox and read-only to its owner: the new ro/new.txt cannot
  // go there, so neither may a.txt, c.txt or d/, whatever order the steps run in.
  const std::string upper = sandbox_->paths().UpperDir(0);
  MakeDirectory(upper + "/ro", 0755);
  WriteFile(upper + "/ro/new.txt", "sandbox new\n");
  chmod((upper + "/ro").c_str(), 0555);
  CommitRequest request;
  request.whole_upper = true;
  try {
    runner_.Commit(*sandbox_, request);
    ADD_FAILURE() << "a commit into a directory its owner cannot write went through";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("new.txt"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ReadFile(live_ + "/a.txt"), "live a\n") << "half a commit went live";
  EXPECT_FALSE(Exists(live_ + "/c.txt")) << "half a commit went live";
  EXPECT_FALSE(Exists(live_ + "/d")) << "half a commit went live";
  EXPECT_FALSE(Exists(live_ + "/ro/new.txt"));
  EXPECT_TRUE(journal_.Unfinished(sandbox_->id()).empty());
  // Nothing was lost either: the changes are the sandbox's still.
  EXPECT_EQ(ReadFile(sandbox_->paths().UpperDir(0) + "/c.txt"), "sandbox c\n");
}

}  // namespace
}  // namespace sandboxd
