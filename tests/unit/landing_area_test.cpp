// Landing areas (commits to roots on another file system): the area's name, the helper's
// actions on the live root, and how an undo maps the journal's inode numbers onto imported
// copies and the copies put back live onto the originals.

#include "commit/landing_area.h"
#include "helper_clients/helper_client.h"
#include "helpers/landing_actions.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "unique_fd.h"
#include "base/tree_copy.h"
#include "model/commit_step.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using nlohmann::json;
using testing::ReadFile;
using testing::ScopedTempDir;
using testing::Exists;
using testing::Lstat;
using testing::WriteFile;

UniqueFd OpenDir(const std::string& path, int flags = O_RDONLY) {
  return UniqueFd(open(path.c_str(), flags | O_DIRECTORY | O_CLOEXEC));
}

ino_t InoOf(const std::string& path) { return Lstat(path).st_ino; }

/// The Code of the Error `run` throws; fails the test when it throws none.
template <typename F>
std::optional<Code> ErrorCodeOf(F run) {
  try {
    run();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no Error thrown";
  return std::nullopt;
}

TEST(LandingNameTest, NamesTheSandboxAndTheCommit) {
  EXPECT_EQ(LandingName("abc", 7), ".sandboxd-commit-abc-7");
  EXPECT_EQ(LandingName("s-1", 1234567890123), ".sandboxd-commit-s-1-1234567890123");
}

// Recovery of a commit cut off after its backups were evacuated but while its landing area was
// being removed runs Evacuate again, over a landing that has lost part of its copies: the
// backups the first evacuation made must stay whole (an undo needs every one of them).
TEST(LandingEvacuateTest, ASecondEvacuationOverAPartlyRemovedAreaKeepsTheBackupsWhole) {
  if (geteuid() != 0) GTEST_SKIP() << "keeping owners needs root";
  ScopedTempDir dir;
  const std::string live = dir.path() + "/live", area = live + "/.sandboxd-commit-s-1";
  ASSERT_EQ(mkdir(live.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(area.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((area + "/upper").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((area + "/removed").c_str(), 0700), 0);
  WriteFile(area + "/upper/a", "a\n");
  WriteFile(area + "/upper/b", "b\n");
  WriteFile(area + "/removed/e1", "e1\n");
  const std::string backup = dir.path() + "/backup", removed = dir.path() + "/removed";
  ASSERT_EQ(mkdir(backup.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(removed.c_str(), 0700), 0);
  UniqueFd live_fd = OpenDir(live, O_PATH);
  HelperPrograms helpers("/nonexistent/helper");
  LandingArea landing(helpers, UserCredentials{}, live_fd.get(), ".sandboxd-commit-s-1", live);
  try {
    landing.Evacuate(backup, removed);
  } catch (const Error& e) {
    if (std::string(e.what()).find("not supported") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  ASSERT_EQ(ReadFile(backup + "/b"), "b\n");
  // The removal, cut off: part of the area is gone.
  ASSERT_EQ(unlink((area + "/upper/b").c_str()), 0);
  ASSERT_EQ(unlink((area + "/removed/e1").c_str()), 0);
  landing.Evacuate(backup, removed);
  EXPECT_EQ(ReadFile(backup + "/a"), "a\n");
  EXPECT_TRUE(Exists(backup + "/b")) << "the backup of b was lost to a second evacuation";
  EXPECT_TRUE(Exists(removed + "/e1")) << "the removed entry e1 was lost to a second evacuation";
}

// A commit cut off while its backups were being evacuated is evacuated again at the next
// start, over what the first try left in the backup directory. The directory itself must stay
// throughout (emptied, never removed and made again): killed between a removal and a making,
// the next start found no directory to evacuate into, could not finish the commit, and left
// its landing area in the live tree (seen in the model test, seed 2, step 58).
TEST(LandingEvacuateTest, AnEvacuationEmptiesTheBackupDirectoriesInPlaceNeverRemovesThem) {
  if (geteuid() != 0) GTEST_SKIP() << "keeping owners needs root";
  ScopedTempDir dir;
  const std::string live = dir.path() + "/live", area = live + "/.sandboxd-commit-s-2";
  ASSERT_EQ(mkdir(live.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(area.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((area + "/upper").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((area + "/removed").c_str(), 0700), 0);
  WriteFile(area + "/upper/a", "a\n");
  const std::string backup = dir.path() + "/backup", removed = dir.path() + "/removed";
  ASSERT_EQ(mkdir(backup.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(removed.c_str(), 0700), 0);
  WriteFile(backup + "/stale", "half a copy\n");  // what a cut-off first try left
  UniqueFd backup_before = OpenDir(backup, O_RDONLY), removed_before = OpenDir(removed, O_RDONLY);
  UniqueFd live_fd = OpenDir(live, O_PATH);
  HelperPrograms helpers("/nonexistent/helper");
  LandingArea landing(helpers, UserCredentials{}, live_fd.get(), ".sandboxd-commit-s-2", live);
  try {
    landing.Evacuate(backup, removed);
  } catch (const Error& e) {
    if (std::string(e.what()).find("not supported") != std::string::npos) GTEST_SKIP() << e.what();
    throw;
  }
  struct stat held {};
  ASSERT_EQ(fstat(backup_before.get(), &held), 0);
  EXPECT_GT(held.st_nlink, 0u) << "the backup directory was removed and made again: a kill between left none";
  ASSERT_EQ(fstat(removed_before.get(), &held), 0);
  EXPECT_GT(held.st_nlink, 0u) << "the removed directory was removed and made again";
  EXPECT_EQ(ReadFile(backup + "/a"), "a\n");
  EXPECT_FALSE(Exists(backup + "/stale")) << "what the cut-off try left was kept beside the copies";
}

/// A temp dir standing for a live root, open as `root_fd_`.
class LandingActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    root_ = temp_ / "root";
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    root_fd_ = OpenDir(root_);
    ASSERT_TRUE(root_fd_);
  }

  ScopedTempDir temp_;
  std::string root_;
  UniqueFd root_fd_;
};

TEST_F(LandingActionsTest, MakeCreatesTheAreaWithUpperAndRemoved) {
  RunLandingActions(json::array({json::array({"make", root_fd_.get(), "area"})}));

  for (const char* part : {"area", "area/upper", "area/removed"}) {
    struct stat st = Lstat(root_ + "/" + part);
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << part;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << part;
  }
}

TEST_F(LandingActionsTest, MakeRefusesAnExistingNameAndLeavesItAlone) {
  ASSERT_EQ(mkdir((root_ + "/area").c_str(), 0755), 0);
  WriteFile(root_ + "/area/theirs.txt", "theirs\n");

  EXPECT_EQ(ErrorCodeOf([&] { RunLandingActions(json::array({json::array({"make", root_fd_.get(), "area"})})); }),
            Code::kConflict);
  EXPECT_EQ(ReadFile(root_ + "/area/theirs.txt"), "theirs\n");
  EXPECT_FALSE(Exists(root_ + "/area/upper"));
  EXPECT_FALSE(Exists(root_ + "/area/removed"));
  EXPECT_EQ(Lstat(root_ + "/area").st_mode & 07777, 0755u);
}

TEST_F(LandingActionsTest, MakeRefusesASymlinkAtTheNameAndDoesNotWriteThroughIt) {
  std::string elsewhere = temp_ / "elsewhere";
  ASSERT_EQ(mkdir(elsewhere.c_str(), 0755), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), (root_ + "/area").c_str()), 0);

  EXPECT_EQ(ErrorCodeOf([&] { RunLandingActions(json::array({json::array({"make", root_fd_.get(), "area"})})); }),
            Code::kConflict);
  EXPECT_FALSE(Exists(elsewhere + "/upper"));
  EXPECT_FALSE(Exists(elsewhere + "/removed"));
}

TEST_F(LandingActionsTest, CopyPutsTheContentsOfOneDirectoryBeneathAPath) {
  std::string stage = temp_ / "stage";
  ASSERT_EQ(mkdir(stage.c_str(), 0700), 0);
  WriteFile(stage + "/a.txt", "a\n");
  ASSERT_EQ(mkdir((stage + "/sub").c_str(), 0755), 0);
  WriteFile(stage + "/sub/b.txt", "b\n", 0600);
  ASSERT_EQ(symlink("../a.txt", (stage + "/sub/link").c_str()), 0);
  UniqueFd stage_fd = OpenDir(stage);
  ASSERT_TRUE(stage_fd);

  RunLandingActions(json::array({json::array({"make", root_fd_.get(), "area"}),
                                 json::array({"copy", stage_fd.get(), root_fd_.get(), "area/upper"})}));

  EXPECT_EQ(ReadFile(root_ + "/area/upper/a.txt"), "a\n");
  EXPECT_EQ(ReadFile(root_ + "/area/upper/sub/b.txt"), "b\n");
  EXPECT_EQ(Lstat(root_ + "/area/upper/sub/b.txt").st_mode & 07777, 0600u);
  EXPECT_TRUE(S_ISLNK(Lstat(root_ + "/area/upper/sub/link").st_mode));
  EXPECT_FALSE(Exists(root_ + "/area/removed/a.txt"));
  EXPECT_FALSE(Exists(root_ + "/a.txt"));
  // The source stays as it was.
  EXPECT_EQ(ReadFile(stage + "/a.txt"), "a\n");
}

TEST_F(LandingActionsTest, CopyNeverFollowsASymlinkOnItsPath) {
  std::string stage = temp_ / "stage", elsewhere = temp_ / "elsewhere";
  ASSERT_EQ(mkdir(stage.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(elsewhere.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((elsewhere + "/upper").c_str(), 0755), 0);
  WriteFile(stage + "/a.txt", "a\n");
  ASSERT_EQ(symlink(elsewhere.c_str(), (root_ + "/area").c_str()), 0);
  UniqueFd stage_fd = OpenDir(stage);
  ASSERT_TRUE(stage_fd);

  EXPECT_THROW(RunLandingActions(json::array({json::array({"copy", stage_fd.get(), root_fd_.get(), "area/upper"})})),
               Error);
  EXPECT_FALSE(Exists(elsewhere + "/upper/a.txt"));
}

TEST_F(LandingActionsTest, CopyRefusesAPathLeavingTheRoot) {
  std::string stage = temp_ / "stage";
  ASSERT_EQ(mkdir(stage.c_str(), 0700), 0);
  WriteFile(stage + "/a.txt", "a\n");
  UniqueFd stage_fd = OpenDir(stage);
  ASSERT_TRUE(stage_fd);

  EXPECT_EQ(ErrorCodeOf([&] {
              RunLandingActions(json::array({json::array({"copy", stage_fd.get(), root_fd_.get(), "../stage2"})}));
            }),
            Code::kInvalidPath);
  EXPECT_EQ(ErrorCodeOf([&] {
              RunLandingActions(json::array({json::array({"copy", stage_fd.get(), root_fd_.get(), temp_.path()})}));
            }),
            Code::kInvalidPath);
  EXPECT_FALSE(Exists(temp_ / "a.txt"));
}

TEST_F(LandingActionsTest, RemoveTakesTheAreaAndALeftoverRemoving) {
  ASSERT_EQ(mkdir((root_ + "/area").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root_ + "/area/upper").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root_ + "/area/upper/d").c_str(), 0755), 0);
  WriteFile(root_ + "/area/upper/d/f", "f\n");
  ASSERT_EQ(mkdir((root_ + "/area/removed").c_str(), 0700), 0);
  WriteFile(root_ + "/area/removed/e3", "gone\n");
  // What an earlier removal cut off half-way left.
  ASSERT_EQ(mkdir((root_ + "/area.removing").c_str(), 0700), 0);
  WriteFile(root_ + "/area.removing/old", "old\n");
  WriteFile(root_ + "/neighbour", "stays\n");

  RunLandingActions(json::array({json::array({"remove", root_fd_.get(), "area"})}));

  EXPECT_FALSE(Exists(root_ + "/area"));
  EXPECT_FALSE(Exists(root_ + "/area.removing"));
  EXPECT_EQ(ReadFile(root_ + "/neighbour"), "stays\n");
}

// A helper killed inside "make" (a daemon killed while a commit fills its area) must leave
// nothing under the area's name that "remove" would take for the owner's and leave live for
// good: the area appears whole or not at all, and what a cut-off make left goes.
TEST_F(LandingActionsTest, AMakeCutOffLeavesNothingUnderTheAreasNameAndIsCleanedUp) {
  // What a make killed between its mkdirs leaves.
  ASSERT_EQ(mkdir((root_ + "/area.making").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root_ + "/area.making/upper").c_str(), 0700), 0);
  EXPECT_FALSE(Exists(root_ + "/area"));
  RunLandingActions(json::array({json::array({"remove", root_fd_.get(), "area"})}));
  EXPECT_FALSE(Exists(root_ + "/area.making"));

  // And a make after one cut off makes the area whole.
  ASSERT_EQ(mkdir((root_ + "/area.making").c_str(), 0700), 0);
  RunLandingActions(json::array({json::array({"make", root_fd_.get(), "area"})}));
  EXPECT_TRUE(Exists(root_ + "/area/upper"));
  EXPECT_TRUE(Exists(root_ + "/area/removed"));
  EXPECT_FALSE(Exists(root_ + "/area.making"));
}

// A commit refused because the owner has something at the area's name must not take that
// with it when it cleans up: only what "make" makes (upper/ and removed/, nothing else) goes.
TEST_F(LandingActionsTest, RemoveLeavesAnythingButALandingAreaAlone) {
  ASSERT_EQ(mkdir((root_ + "/area").c_str(), 0700), 0);
  WriteFile(root_ + "/area/mine", "the owner's\n");
  ASSERT_EQ(mkdir((root_ + "/empty").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root_ + "/lookalike").c_str(), 0700), 0);
  for (const char* dir : {"/lookalike/upper", "/lookalike/removed", "/lookalike/more"}) ASSERT_EQ(mkdir((root_ + dir).c_str(), 0700), 0);
  for (const char* name : {"area", "empty", "lookalike"})
    RunLandingActions(json::array({json::array({"remove", root_fd_.get(), name})}));
  EXPECT_EQ(ReadFile(root_ + "/area/mine"), "the owner's\n");
  EXPECT_TRUE(Exists(root_ + "/empty"));
  EXPECT_TRUE(Exists(root_ + "/lookalike/more"));
}

TEST_F(LandingActionsTest, RemoveOfAMissingAreaIsFine) {
  EXPECT_NO_THROW(RunLandingActions(json::array({json::array({"remove", root_fd_.get(), "area"})})));
  EXPECT_FALSE(Exists(root_ + "/area"));
}

TEST_F(LandingActionsTest, ActionsRunInOrderAndSyncIsAccepted) {
  std::string stage = temp_ / "stage";
  ASSERT_EQ(mkdir(stage.c_str(), 0700), 0);
  WriteFile(stage + "/a.txt", "a\n");
  UniqueFd stage_fd = OpenDir(stage);
  ASSERT_TRUE(stage_fd);
  for (const char* dir : {"/area", "/area/upper", "/area/removed"}) ASSERT_EQ(mkdir((root_ + dir).c_str(), 0700), 0);
  WriteFile(root_ + "/area/upper/stale", "from a cut-off import\n");

  // As Import sends them: the stale area goes before the fresh one is made.
  RunLandingActions(json::array({json::array({"remove", root_fd_.get(), "area"}),
                                 json::array({"make", root_fd_.get(), "area"}),
                                 json::array({"copy", stage_fd.get(), root_fd_.get(), "area/upper"}),
                                 json::array({"sync", root_fd_.get()})}));

  EXPECT_FALSE(Exists(root_ + "/area/upper/stale"));
  EXPECT_EQ(ReadFile(root_ + "/area/upper/a.txt"), "a\n");
  EXPECT_TRUE(Exists(root_ + "/area/removed"));
}

TEST_F(LandingActionsTest, UnknownVerbThrows) {
  EXPECT_EQ(ErrorCodeOf([&] { RunLandingActions(json::array({json::array({"explode", root_fd_.get(), "area"})})); }),
            Code::kInvalidArgument);
  EXPECT_FALSE(Exists(root_ + "/area"));
}

CommitStep Step(size_t seq, size_t root, const std::string& path, StepAction action, ino_t old_ino) {
  CommitStep step;
  step.seq = seq;
  step.root = root;
  step.path = path;
  step.action = action;
  step.old_ino = old_ino;
  return step;
}

/// An "upper" and a "removed" directory as an import leaves them, open as fds.
class LandingRebaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(temp_.path().empty());
    upper_ = temp_ / "upper";
    removed_ = temp_ / "removed";
    ASSERT_EQ(mkdir(upper_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir(removed_.c_str(), 0700), 0);
    upper_fd_ = OpenDir(upper_, O_PATH);
    removed_fd_ = OpenDir(removed_, O_PATH);
    ASSERT_TRUE(upper_fd_ && removed_fd_);
  }

  ScopedTempDir temp_;
  std::string upper_, removed_;
  UniqueFd upper_fd_, removed_fd_;
};

TEST_F(LandingRebaseTest, SetAsideStepsOfTheRootTakeTheirImportedCopiesInodes) {
  // Root 0, rebased: a replaced file (nested too), a removed tree, a file a directory replaced.
  CommitStep place = Step(0, 0, "a.txt", StepAction::kPlace, 901);
  CommitStep nested = Step(1, 0, "sub/c.txt", StepAction::kPlace, 902);
  CommitStep remove = Step(2, 0, "gone", StepAction::kRemove, 903);
  CommitStep make_dir = Step(3, 0, "dir", StepAction::kMakeDirectory, 904);
  // Root 0, unchanged: nothing was there before, or nothing was set aside.
  CommitStep place_new = Step(4, 0, "new.txt", StepAction::kPlace, 0);
  CommitStep remove_none = Step(5, 0, "none", StepAction::kRemove, 0);
  CommitStep move = Step(6, 0, "moved", StepAction::kMove, 905);
  move.from = "origin";
  CommitStep chmod_step = Step(7, 0, ".", StepAction::kChmod, 906);
  chmod_step.old_mode = 0755;
  chmod_step.new_mode = 0700;
  // Root 1: another root's, unchanged whatever sits in these directories.
  CommitStep other_place = Step(8, 1, "b.txt", StepAction::kPlace, 907);
  CommitStep other_remove = Step(9, 1, "x", StepAction::kRemove, 908);

  WriteFile(upper_ + "/a.txt", "old a\n");
  ASSERT_EQ(mkdir((upper_ + "/sub").c_str(), 0755), 0);
  WriteFile(upper_ + "/sub/c.txt", "old c\n");
  ASSERT_EQ(mkdir((removed_ + "/e2").c_str(), 0755), 0);
  WriteFile(removed_ + "/e3", "was where dir is\n");
  // Entries the unchanged steps would find if they (wrongly) looked.
  WriteFile(upper_ + "/new.txt", "");
  WriteFile(removed_ + "/e5", "");
  WriteFile(upper_ + "/moved", "");
  WriteFile(removed_ + "/e6", "");
  WriteFile(removed_ + "/e7", "");
  WriteFile(upper_ + "/b.txt", "");
  WriteFile(removed_ + "/e9", "");

  std::vector<CommitStep> steps = {place,       nested, remove,     make_dir,    place_new,
                                   remove_none, move,   chmod_step, other_place, other_remove};
  std::vector<CommitStep> rebased = RebaseOnImportedBackups(steps, 0, upper_fd_.get(), removed_fd_.get());

  ASSERT_EQ(rebased.size(), steps.size());
  std::vector<CommitStep> expected = steps;
  expected[0].old_ino = InoOf(upper_ + "/a.txt");
  expected[1].old_ino = InoOf(upper_ + "/sub/c.txt");
  expected[2].old_ino = InoOf(removed_ + "/e2");
  expected[3].old_ino = InoOf(removed_ + "/e3");
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(rebased[i], expected[i]) << "step " << i << " " << steps[i].path;
}

TEST_F(LandingRebaseTest, OnlyTheGivenRootIsRebased) {
  WriteFile(upper_ + "/b.txt", "");
  WriteFile(removed_ + "/e2", "");
  std::vector<CommitStep> steps = {Step(0, 0, "b.txt", StepAction::kPlace, 11), Step(1, 1, "b.txt", StepAction::kPlace, 12),
                                   Step(2, 1, "x", StepAction::kRemove, 13)};

  std::vector<CommitStep> rebased = RebaseOnImportedBackups(steps, 1, upper_fd_.get(), removed_fd_.get());

  ASSERT_EQ(rebased.size(), 3u);
  EXPECT_EQ(rebased[0].old_ino, 11u);
  EXPECT_EQ(rebased[1].old_ino, InoOf(upper_ + "/b.txt"));
  EXPECT_EQ(rebased[2].old_ino, InoOf(removed_ + "/e2"));
}

TEST_F(LandingRebaseTest, MissingReplacedBackupThrows) {
  std::vector<CommitStep> steps = {Step(0, 0, "a.txt", StepAction::kPlace, 11)};
  EXPECT_EQ(ErrorCodeOf([&] { RebaseOnImportedBackups(steps, 0, upper_fd_.get(), removed_fd_.get()); }), Code::kFailed);
}

TEST_F(LandingRebaseTest, MissingRemovedBackupThrows) {
  // The removed entry of step 4 is e4; an e3 there does not stand for it.
  WriteFile(removed_ + "/e3", "");
  std::vector<CommitStep> steps = {Step(4, 0, "gone", StepAction::kRemove, 11)};
  EXPECT_EQ(ErrorCodeOf([&] { RebaseOnImportedBackups(steps, 0, upper_fd_.get(), removed_fd_.get()); }), Code::kFailed);
  std::vector<CommitStep> make_dir = {Step(4, 0, "dir", StepAction::kMakeDirectory, 11)};
  EXPECT_EQ(ErrorCodeOf([&] { RebaseOnImportedBackups(make_dir, 0, upper_fd_.get(), removed_fd_.get()); }), Code::kFailed);
}

/// Sets kOriginAttribute on `path` (not following a symlink).
bool SetOrigin(const std::string& path, const std::string& value) {
  return lsetxattr(path.c_str(), kOriginAttribute, value.data(), value.size(), 0) == 0;
}

/// A commit's backups in the state directory ("backup", "removed") and the live root they were
/// put back into ("live"), as an undo through a landing area leaves them.
class LandingRestoredAliasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "trusted xattrs need root";
    ASSERT_FALSE(temp_.path().empty());
    backup_ = temp_ / "backup";
    removed_ = temp_ / "removed";
    live_ = temp_ / "live";
    for (const auto& dir : {backup_, removed_, live_}) ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    WriteFile(backup_ + "/a.txt", "a\n");
    ASSERT_EQ(mkdir((removed_ + "/e1").c_str(), 0755), 0);
    WriteFile(removed_ + "/e1/x.txt", "x\n");
    if (!SetOrigin(backup_ + "/a.txt", "111")) {
      if (errno == ENOTSUP) GTEST_SKIP() << "no trusted xattrs on this file system";
      FAIL() << "lsetxattr: " << strerror(errno);
    }
    ASSERT_TRUE(SetOrigin(removed_ + "/e1", "222"));
    WriteFile(live_ + "/a.txt", "a\n");
    ASSERT_EQ(mkdir((live_ + "/d").c_str(), 0755), 0);
    WriteFile(live_ + "/d/x.txt", "x\n");
    backup_fd_ = OpenDir(backup_);
    removed_fd_ = OpenDir(removed_);
    live_fd_ = OpenDir(live_, O_PATH);
    ASSERT_TRUE(backup_fd_ && removed_fd_ && live_fd_);
    steps_ = {Step(0, 0, "a.txt", StepAction::kPlace, 111), Step(1, 0, "d", StepAction::kRemove, 222)};
  }

  std::vector<InodeAlias> Aliases(size_t root = 0) {
    return RestoredAliases(backup_fd_.get(), removed_fd_.get(), live_fd_.get(), root, steps_);
  }

  ScopedTempDir temp_;
  std::string backup_, removed_, live_;
  UniqueFd backup_fd_, removed_fd_, live_fd_;
  std::vector<CommitStep> steps_;
};

TEST_F(LandingRestoredAliasesTest, EachMarkedBackupAliasesTheEntryNowLiveAtItsPath) {
  ASSERT_TRUE(SetOrigin(removed_ + "/e1/x.txt", "333"));

  std::vector<InodeAlias> expected = {{0, "a.txt", 111, InoOf(live_ + "/a.txt")},
                                      {0, "d", 222, InoOf(live_ + "/d")},
                                      {0, "d/x.txt", 333, InoOf(live_ + "/d/x.txt")}};
  EXPECT_EQ(Aliases(), expected);
}

TEST_F(LandingRestoredAliasesTest, AnEntryWithoutItsOriginGivesNoAlias) {
  // d/x.txt carries no origin: the others still alias, it does not.
  std::vector<InodeAlias> expected = {{0, "a.txt", 111, InoOf(live_ + "/a.txt")}, {0, "d", 222, InoOf(live_ + "/d")}};
  EXPECT_EQ(Aliases(), expected);
}

TEST_F(LandingRestoredAliasesTest, AnotherRootsStepsGiveNoAliases) {
  ASSERT_TRUE(SetOrigin(removed_ + "/e1/x.txt", "333"));
  EXPECT_TRUE(Aliases(1).empty());
}

TEST_F(LandingRestoredAliasesTest, ABackupWhosePathIsNotLiveGivesNoAlias) {
  ASSERT_TRUE(SetOrigin(removed_ + "/e1/x.txt", "333"));
  ASSERT_EQ(unlink((live_ + "/a.txt").c_str()), 0);
  std::vector<InodeAlias> expected = {{0, "d", 222, InoOf(live_ + "/d")}, {0, "d/x.txt", 333, InoOf(live_ + "/d/x.txt")}};
  EXPECT_EQ(Aliases(), expected);
}

}  // namespace
}  // namespace sandboxd
