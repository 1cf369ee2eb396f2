// The journaled commit's steps on real directories of one file system: planned from a hand-made
// upper layer, carried forward, forward again (a restart repeating them), and back; and a live
// entry changed in the middle of a commit, which must stop it and lose nothing when taken back.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "base/errors.h"
#include "unique_fd.h"
#include "commit/commit_planner.h"
#include "helpers/commit_steps_apply.h"
#include "sandbox/changeset_scanner.h"
#include "temp_dir.h"
#include "myself.h"

namespace sandboxd {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::ScopedTempDir;
using testing::WriteFile;

/// Per path: type and mode, inode, and content or link target.
std::map<std::string, std::string> Snapshot(const std::string& dir, bool with_inodes = false) {
  std::map<std::string, std::string> result;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    struct stat st;
    lstat(it->path().c_str(), &st);
    std::string value = std::to_string(st.st_mode);
    if (with_inodes) value += " ino=" + std::to_string(st.st_ino);
    if (S_ISREG(st.st_mode)) value += " " + ReadFile(it->path());
    if (S_ISLNK(st.st_mode)) value += " -> " + fs::read_symlink(it->path()).string();
    result[fs::relative(it->path(), dir).string()] = value;
  }
  return result;
}

class CommitStepsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "whiteouts are device nodes: making them needs root";
    for (const char* d : {"live", "upper", "removed", "expected"}) fs::create_directory(temp_ / d);
    // The live tree, and the same tree as the job left it (expected) with its upper layer.
    for (const char* root : {"live", "expected"}) {
      std::string r = temp_ / root;
      fs::create_directories(r + "/dir/sub");
      WriteFile(r + "/keep.txt", "keep\n");
      WriteFile(r + "/edit.txt", "old\n");
      WriteFile(r + "/gone.txt", "gone\n");
      WriteFile(r + "/dir/sub/deep.txt", "deep\n");
      WriteFile(r + "/was-dir-file", "file\n");
      WriteFile(r + "/mode.sh", "#!/bin/sh\n", 0644);
      symlink("keep.txt", (r + "/link").c_str());
    }
    std::string e = temp_ / "expected", u = temp_ / "upper";
    WriteFile(e + "/edit.txt", "new\n");
    WriteFile(u + "/edit.txt", "new\n");
    fs::remove(e + "/gone.txt");
    ASSERT_EQ(mknod((u + "/gone.txt").c_str(), S_IFCHR, makedev(0, 0)), 0);
    fs::remove_all(e + "/dir");
    WriteFile(e + "/dir", "a file now\n");
    WriteFile(u + "/dir", "a file now\n");
    fs::remove(e + "/was-dir-file");
    fs::create_directories(e + "/was-dir-file/inner");
    fs::create_directories(u + "/was-dir-file/inner");
    WriteFile(e + "/was-dir-file/inner/x", "x\n");
    WriteFile(u + "/was-dir-file/inner/x", "x\n");
    chmod((e + "/mode.sh").c_str(), 0755);
    WriteFile(u + "/mode.sh", "#!/bin/sh\n", 0755);
    fs::remove(e + "/link");
    symlink("edit.txt", (e + "/link").c_str());
    symlink("edit.txt", (u + "/link").c_str());
    WriteFile(e + "/added.txt", "added\n");
    WriteFile(u + "/added.txt", "added\n");
    ASSERT_EQ(mkfifo((e + "/pipe").c_str(), 0640), 0);
    ASSERT_EQ(mkfifo((u + "/pipe").c_str(), 0640), 0);
    chmod((e + "/pipe").c_str(), 0640);
    chmod((u + "/pipe").c_str(), 0640);

    live_.reset(open((temp_ / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    upper_.reset(open((temp_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    removed_.reset(open((temp_ / "removed").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    roots_ = {{live_.get(), upper_.get(), removed_.get()}};
  }

  std::vector<CommitStep> Plan() {
    std::vector<RootChanges> changes = {{0, ScanChanges(live_.get(), upper_.get(), testing::Myself())}};
    CommitPlan plan = PlanCommit(changes, {live_.get()}, {upper_.get()}, {""});
    EXPECT_TRUE(plan.skipped.empty());
    return plan.steps;
  }

  ScopedTempDir temp_;
  UniqueFd live_, upper_, removed_;
  std::vector<StepRoot> roots_;
};

TEST_F(CommitStepsTest, ForwardGivesTheJobsTreeAndBackGivesTheSameInodesAgain) {
  auto before = Snapshot(temp_ / "live", true);
  auto steps = Plan();
  ASSERT_GE(steps.size(), 8u);
  RollForward(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live"), Snapshot(temp_ / "expected"));
  // A restart repeats the steps of a commit that was in fact finished: nothing moves.
  auto after = Snapshot(temp_ / "live", true);
  RollForward(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), after);
  // Back: the very same entries (inodes) as before, the replaced directory with its children.
  RollBack(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
  RollBack(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
}

TEST_F(CommitStepsTest, HalfDoneForwardCanBeFinishedOrTakenBack) {
  auto before = Snapshot(temp_ / "live", true);
  auto steps = Plan();
  std::vector<CommitStep> first_half(steps.begin(), steps.begin() + static_cast<long>(steps.size() / 2));
  RollForward(first_half, roots_);  // as if the daemon died here
  RollForward(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live"), Snapshot(temp_ / "expected"));
  RollBack(steps, roots_);
  RollForward(first_half, roots_);
  RollBack(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
}

TEST_F(CommitStepsTest, LiveEntryChangedDuringTheCommitStopsItAndNothingIsLost) {
  auto steps = Plan();
  // The user saves edit.txt the way editors do (a new file renamed over) after the plan.
  WriteFile(temp_ / "live/edit.tmp", "the user's own edit\n");
  fs::rename(temp_ / "live/edit.tmp", temp_ / "live/edit.txt");
  auto before = Snapshot(temp_ / "live", true);
  try {
    RollForward(steps, roots_);
    FAIL() << "the commit went on over a changed live file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kConflict);
    EXPECT_NE(std::string(e.what()).find("edit.txt"), std::string::npos) << e.what();
  }
  RollBack(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
  EXPECT_EQ(ReadFile(temp_ / "live/edit.txt"), "the user's own edit\n");
  EXPECT_EQ(ReadFile(temp_ / "upper/edit.txt"), "new\n");  // the sandbox's version is kept too
}

TEST_F(CommitStepsTest, AFileMadeLiveWhereTheCommitAddsOneStopsItAndNothingIsLost) {
  auto steps = Plan();
  // Nothing was at added.txt when the commit was planned; the user makes one before it runs.
  WriteFile(temp_ / "live/added.txt", "the user's own file\n");
  auto before = Snapshot(temp_ / "live", true);
  try {
    RollForward(steps, roots_);
    FAIL() << "the commit went on over a file made live meanwhile";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kConflict);
    EXPECT_NE(std::string(e.what()).find("added.txt"), std::string::npos) << e.what();
  }
  RollBack(steps, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
  EXPECT_EQ(ReadFile(temp_ / "live/added.txt"), "the user's own file\n");
  EXPECT_EQ(ReadFile(temp_ / "upper/added.txt"), "added\n");
}

TEST_F(CommitStepsTest, NeverWritesThroughASymlinkPlantedInTheLiveTree) {
  // The sandbox adds newdir/f; before the commit, newdir appears live as a symlink to
  // somewhere else (another user's home, /etc): the commit must stop, not write through it.
  fs::create_directory(temp_ / "elsewhere");
  fs::create_directories(temp_ / "upper/newdir");
  WriteFile(temp_ / "upper/newdir/f", "f\n");
  auto steps = Plan();
  symlink((temp_ / "elsewhere").c_str(), (temp_ / "live/newdir").c_str());
  EXPECT_THROW(RollForward(steps, roots_), Error);
  RollBack(steps, roots_);
  EXPECT_TRUE(fs::is_empty(temp_ / "elsewhere"));
  EXPECT_TRUE(fs::is_symlink(temp_ / "live/newdir"));
}

/// A rename committed as one step: the live entry itself moves from `from` to the path.
class MoveStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* d : {"live", "upper", "removed"}) fs::create_directory(temp_ / d);
    fs::create_directory(temp_ / "live/sub");
    WriteFile(temp_ / "live/old.txt", "moved content\n");
    live_.reset(open((temp_ / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    upper_.reset(open((temp_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    removed_.reset(open((temp_ / "removed").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    roots_ = {{live_.get(), upper_.get(), removed_.get()}};
    struct stat st;
    ASSERT_EQ(lstat((temp_ / "live/old.txt").c_str(), &st), 0);
    live_ino_ = st.st_ino;
    step_.root = 0;
    step_.path = "sub/new.txt";
    step_.action = StepAction::kMove;
    step_.old_ino = live_ino_;
    step_.from = "old.txt";
  }

  ino_t InodeAt(const std::string& relative) {
    struct stat st;
    if (lstat((temp_ / ("live/" + relative)).c_str(), &st) != 0) return 0;
    return st.st_ino;
  }

  /// Runs `run`, which must throw Error(kConflict) naming `path`.
  template <typename F>
  void ExpectConflictNaming(F run, const std::string& path) {
    try {
      run();
      ADD_FAILURE() << "no conflict over " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kConflict) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }

  ScopedTempDir temp_;
  UniqueFd live_, upper_, removed_;
  std::vector<StepRoot> roots_;
  ino_t live_ino_ = 0;
  CommitStep step_;
};

TEST_F(MoveStepTest, TheLiveEntryMovesKeepingItsInodeAndBothDirectionsRepeatSafely) {
  RollForward({step_}, roots_);
  EXPECT_EQ(InodeAt("sub/new.txt"), live_ino_);
  EXPECT_EQ(InodeAt("old.txt"), 0u);
  EXPECT_EQ(ReadFile(temp_ / "live/sub/new.txt"), "moved content\n");
  // A restart repeats the step of a finished commit: nothing moves.
  auto after = Snapshot(temp_ / "live", true);
  RollForward({step_}, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), after);
  RollBack({step_}, roots_);
  EXPECT_EQ(InodeAt("old.txt"), live_ino_);
  EXPECT_EQ(InodeAt("sub/new.txt"), 0u);
  auto back = Snapshot(temp_ / "live", true);
  RollBack({step_}, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), back);
  // The removed area and the upper are not involved in a move.
  EXPECT_TRUE(fs::is_empty(temp_ / "removed"));
}

TEST_F(MoveStepTest, ASourceReplacedBeforeTheMoveStopsItAndNothingMoves) {
  // The user saves old.txt the way editors do: a new file (a new inode) renamed over it.
  WriteFile(temp_ / "live/old.tmp", "the user's own edit\n");
  fs::rename(temp_ / "live/old.tmp", temp_ / "live/old.txt");
  ASSERT_NE(InodeAt("old.txt"), live_ino_);
  auto before = Snapshot(temp_ / "live", true);
  ExpectConflictNaming([&] { RollForward({step_}, roots_); }, "old.txt");
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
  // Taking the failed commit back leaves the user's file where it is.
  RollBack({step_}, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
}

TEST_F(MoveStepTest, AnEntryAtTheDestinationStopsTheMoveAndNothingIsLost) {
  WriteFile(temp_ / "live/sub/new.txt", "made live meanwhile\n");
  auto before = Snapshot(temp_ / "live", true);
  ExpectConflictNaming([&] { RollForward({step_}, roots_); }, "sub/new.txt");
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
  RollBack({step_}, roots_);
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
  EXPECT_EQ(ReadFile(temp_ / "live/old.txt"), "moved content\n");
  EXPECT_EQ(ReadFile(temp_ / "live/sub/new.txt"), "made live meanwhile\n");
}

TEST_F(MoveStepTest, TakingBackAMoveOverAPathCreatedAgainIsRefused) {
  RollForward({step_}, roots_);
  WriteFile(temp_ / "live/old.txt", "a new file at the old path\n");
  auto before = Snapshot(temp_ / "live", true);
  ExpectConflictNaming([&] { RollBack({step_}, roots_); }, "old.txt");
  EXPECT_EQ(Snapshot(temp_ / "live", true), before);
}

TEST_F(MoveStepTest, AFinishedMoveRepeatsAfterItsSourceDirectoryWentAway) {
  // Moved out of olddir; the daemon died before recording it; the user removed the empty olddir.
  fs::create_directory(temp_ / "live/olddir");
  fs::rename(temp_ / "live/old.txt", temp_ / "live/olddir/old.txt");
  step_.from = "olddir/old.txt";
  RollForward({step_}, roots_);
  fs::remove(temp_ / "live/olddir");
  auto after = Snapshot(temp_ / "live", true);
  RollForward({step_}, roots_);  // recovery finishes the commit: nothing to do
  EXPECT_EQ(Snapshot(temp_ / "live", true), after);
  // Taking it back now has nowhere to go: refused, and the file stays where it is.
  ExpectConflictNaming([&] { RollBack({step_}, roots_); }, "olddir");
  EXPECT_EQ(InodeAt("sub/new.txt"), live_ino_);
}

TEST(StepPackingTest, EveryFieldOfEveryActionSurvivesTheTripToTheHelper) {
  std::vector<CommitStep> steps;
  for (StepAction action : {StepAction::kPlace, StepAction::kMakeDirectory, StepAction::kRemove, StepAction::kChmod, StepAction::kMove}) {
    CommitStep step;
    step.seq = steps.size() * 1000003;
    step.root = steps.size() + 1;
    step.action = action;
    step.path = std::string("d/x\xff\n") + std::to_string(steps.size());  // names are bytes, not text
    step.old_ino = (ino_t{1} << 40) + steps.size();
    step.new_ino = 12;
    step.old_mode = 04640;
    step.new_mode = 0755;
    if (action == StepAction::kMove) step.from = "old.txt";
    steps.push_back(step);
  }
  EXPECT_EQ(UnpackSteps(PackSteps(steps)), steps);
  EXPECT_TRUE(UnpackSteps(PackSteps({})).empty());
}

TEST(StepPackingTest, BytesThatAreNotWholeValidStepsAreRefused) {
  CommitStep move;
  move.seq = 3;
  move.action = StepAction::kMove;
  move.path = "sub/new.txt";
  move.from = "old.txt";
  std::string packed = PackSteps({move});
  // Cut anywhere inside: refused, never read past the end.
  for (size_t size = 1; size < packed.size(); ++size) EXPECT_THROW(UnpackSteps(packed.substr(0, size)), Error) << size;
  // A move without its source.
  move.from.clear();
  EXPECT_THROW(UnpackSteps(PackSteps({move})), Error);
  // An action byte no step has (it follows seq and root).
  std::string unknown = PackSteps({CommitStep{}});
  unknown[16] = 9;
  EXPECT_THROW(UnpackSteps(unknown), Error);
  // A length that claims more bytes than follow.
  std::string long_path = PackSteps({CommitStep{}});
  long_path[16 + 1 + 8 + 8 + 4 + 4] = '\x7f';
  EXPECT_THROW(UnpackSteps(long_path), Error);
}

}  // namespace
}  // namespace sandboxd
