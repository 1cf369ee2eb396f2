// Renames in a change set: candidates matched from metadata alone, proposed from a real live
// tree and upper layer (whiteouts are device nodes: root only), confirmed by content; and a
// confirmed rename planned as one move of the live entry, committed and taken back.

#include "model/renames.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>

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

RenameSide File(const std::string& path, off_t size) { return {path, EntryType::kFile, size}; }

ino_t InodeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

// --- MatchRenameCandidates: metadata only ---

TEST(MatchRenameCandidatesTest, PairsByTypeAndSize) {
  auto candidates = MatchRenameCandidates({File("a.txt", 10), File("b.txt", 20)}, {File("c.txt", 20), File("d.txt", 30)});
  // d.txt matches no deleted size: it is left out, not listed with no candidates.
  EXPECT_EQ(candidates, (RenameCandidates{{"c.txt", {"b.txt"}}}));
}

TEST(MatchRenameCandidatesTest, EmptyFilesDirectoriesAndFifosAreNeverRenames) {
  // Same type and size on both sides each time: only the type or the emptiness keeps them apart.
  std::vector<RenameSide> deleted = {File("empty-old", 0), {"dir-old", EntryType::kDirectory, 4096},
                                     {"fifo-old", EntryType::kFifo, 5}};
  std::vector<RenameSide> added = {File("empty-new", 0), {"dir-new", EntryType::kDirectory, 4096},
                                   {"fifo-new", EntryType::kFifo, 5}};
  EXPECT_TRUE(MatchRenameCandidates(deleted, added).empty());
}

TEST(MatchRenameCandidatesTest, AFileAndASymlinkOfTheSameSizeAreNotPaired) {
  std::vector<RenameSide> link = {{"link", EntryType::kSymlink, 8}};
  std::vector<RenameSide> other_link = {{"other-link", EntryType::kSymlink, 8}};
  EXPECT_TRUE(MatchRenameCandidates(link, {File("file", 8)}).empty());
  EXPECT_TRUE(MatchRenameCandidates({File("file", 8)}, other_link).empty());
  // Symlinks themselves may be renamed.
  EXPECT_EQ(MatchRenameCandidates(link, other_link), (RenameCandidates{{"other-link", {"link"}}}));
}

TEST(MatchRenameCandidatesTest, SameFileNameIsTriedFirstThenPathOrder) {
  std::vector<RenameSide> deleted = {File("a/x.txt", 7), File("b/y.txt", 7), File("c/y.txt", 7), File("d/z.txt", 7)};
  auto candidates = MatchRenameCandidates(deleted, {File("new/y.txt", 7)});
  EXPECT_EQ(candidates, (RenameCandidates{{"new/y.txt", {"b/y.txt", "c/y.txt", "a/x.txt", "d/z.txt"}}}));
}

TEST(MatchRenameCandidatesTest, EveryAddedPathGetsItsOwnListInTheOrderGiven) {
  // Matching assigns nothing: two copies of one deleted file both list it (confirming picks one).
  auto candidates = MatchRenameCandidates({File("old", 3)}, {File("copy-2", 3), File("copy-1", 3)});
  EXPECT_EQ(candidates, (RenameCandidates{{"copy-2", {"old"}}, {"copy-1", {"old"}}}));
}

TEST(MatchRenameCandidatesTest, AtMostMaxRenameTriesCandidatesAndTheSameNameSurvivesTheCut) {
  std::vector<RenameSide> deleted;
  for (size_t i = 0; i < kMaxRenameTries + 4; ++i) deleted.push_back(File("d" + std::to_string(10 + i) + "/f", 100));
  deleted.push_back(File("zz/wanted.txt", 100));  // last in path order, but the same file name
  auto candidates = MatchRenameCandidates(deleted, {File("new/wanted.txt", 100)});
  ASSERT_EQ(candidates.size(), 1u);
  const auto& froms = candidates[0].second;
  ASSERT_EQ(froms.size(), kMaxRenameTries);
  EXPECT_EQ(froms[0], "zz/wanted.txt");
  EXPECT_EQ(froms[1], "d10/f");
  EXPECT_EQ(froms.back(), "d" + std::to_string(10 + kMaxRenameTries - 2) + "/f");
}

TEST(MayHaveRenamesTest, NeedsADeletedAndAnAddedFileOrSymlink) {
  Change deleted{"old", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone, 0644, 0};
  Change added{"new", ChangeKind::kAdded, EntryType::kNone, EntryType::kSymlink, 0, 0777};
  Change added_dir{"dir", ChangeKind::kAdded, EntryType::kNone, EntryType::kDirectory, 0, 0755};
  EXPECT_TRUE(MayHaveRenames({deleted, added}));
  EXPECT_FALSE(MayHaveRenames({deleted, added_dir}));
  EXPECT_FALSE(MayHaveRenames({added}));
}

// --- ProposeRenames: sizes read from a real live tree and upper layer ---

class ProposeRenamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "whiteouts are device nodes: making them needs root";
    fs::create_directory(temp_ / "live");
    fs::create_directory(temp_ / "upper");
    live_.reset(open((temp_ / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    upper_.reset(open((temp_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  std::string L(const std::string& p) { return temp_ / ("live/" + p); }
  std::string U(const std::string& p) { return temp_ / ("upper/" + p); }
  void Whiteout(const std::string& p) { ASSERT_EQ(mknod(U(p).c_str(), S_IFCHR, makedev(0, 0)), 0) << p; }
  void Dir(const std::string& path) {
    mkdir(path.c_str(), 0755);
    chmod(path.c_str(), 0755);  // the scanner compares modes: no umask surprise
  }
  RenameCandidates Propose() { return ProposeRenames(live_.get(), upper_.get(), ScanChanges(live_.get(), upper_.get(), testing::Myself())); }

  ScopedTempDir temp_;
  UniqueFd live_, upper_;
};

TEST_F(ProposeRenamesTest, AWhiteoutAndAnAddedFileOfTheSameSizeAreProposedWithoutReadingThem) {
  Dir(L("docs"));
  Dir(U("docs"));
  WriteFile(L("docs/old.txt"), "hello\n");
  Whiteout("docs/old.txt");
  WriteFile(L("short.txt"), "x");  // deleted too, but of another size
  Whiteout("short.txt");
  WriteFile(U("new.txt"), "world\n");  // same size, other content: confirming is the helper's job
  EXPECT_EQ(Propose(), (RenameCandidates{{"new.txt", {"docs/old.txt"}}}));
}

TEST_F(ProposeRenamesTest, AFileHiddenByAnOpaqueDirectoryIsNotProposed) {
  Dir(L("d"));
  WriteFile(L("d/hidden.txt"), "hello\n");
  Dir(U("d"));
  ASSERT_EQ(setxattr(U("d").c_str(), "trusted.overlay.opaque", "y", 1, 0), 0);
  WriteFile(L("gone.txt"), "hello\n");
  Whiteout("gone.txt");
  WriteFile(U("new.txt"), "hello\n");
  // The scanner lists d/hidden.txt as deleted; only the whiteout is a deletion of its own.
  EXPECT_EQ(Propose(), (RenameCandidates{{"new.txt", {"gone.txt"}}}));
}

TEST_F(ProposeRenamesTest, AFileBelowADirectoryReplacedByAFileIsNotProposed) {
  Dir(L("p"));
  WriteFile(L("p/old.txt"), "hello\n");
  WriteFile(U("p"), "now a file\n");
  WriteFile(U("new.txt"), "hello\n");
  std::vector<Change> changes = {
      {"new.txt", ChangeKind::kAdded, EntryType::kNone, EntryType::kFile, 0, 0644},
      {"p/old.txt", ChangeKind::kDeleted, EntryType::kFile, EntryType::kNone, 0644, 0},
  };
  EXPECT_TRUE(ProposeRenames(live_.get(), upper_.get(), changes).empty());
  // The same deletion made by a whiteout of its own is proposed.
  fs::remove(U("p"));
  Dir(U("p"));
  Whiteout("p/old.txt");
  EXPECT_EQ(ProposeRenames(live_.get(), upper_.get(), changes), (RenameCandidates{{"new.txt", {"p/old.txt"}}}));
}

// --- ConfirmRenames: contents compared (as the owner, in the helper) ---

class ConfirmRenamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(temp_ / "live");
    fs::create_directory(temp_ / "upper");
    live_.reset(open((temp_ / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    upper_.reset(open((temp_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  std::string L(const std::string& p) { return temp_ / ("live/" + p); }
  std::string U(const std::string& p) { return temp_ / ("upper/" + p); }
  std::vector<Rename> Confirm(const RenameCandidates& candidates) {
    return ConfirmRenames(live_.get(), upper_.get(), candidates);
  }

  ScopedTempDir temp_;
  UniqueFd live_, upper_;
};

TEST_F(ConfirmRenamesTest, IdenticalContentIsARename) {
  fs::create_directory(U("sub"));
  WriteFile(L("old.txt"), "the same content\n");
  WriteFile(U("sub/new.txt"), "the same content\n", 0755);  // modes are not compared
  EXPECT_EQ(Confirm({{"sub/new.txt", {"old.txt"}}}), (std::vector<Rename>{{"old.txt", "sub/new.txt"}}));
}

TEST_F(ConfirmRenamesTest, DifferentContentOfTheSameSizeIsNoRename) {
  WriteFile(L("old.txt"), "aaaa");
  WriteFile(U("new.txt"), "aaab");
  // Past the first compared chunk too: a file differing only in its last byte.
  std::string big(200 * 1024, 'x');
  WriteFile(L("big-old"), big);
  WriteFile(U("big-new"), big.substr(0, big.size() - 1) + "y");
  EXPECT_TRUE(Confirm({{"new.txt", {"old.txt"}}, {"big-new", {"big-old"}}}).empty());
}

TEST_F(ConfirmRenamesTest, SymlinksWithTheSameTargetAreRenamed) {
  symlink("target/x", L("old-link").c_str());
  symlink("target/x", U("new-link").c_str());
  symlink("target/y", L("other-old").c_str());
  symlink("target/z", U("other-new").c_str());
  EXPECT_EQ(Confirm({{"new-link", {"old-link"}}, {"other-new", {"other-old"}}}),
            (std::vector<Rename>{{"old-link", "new-link"}}));
}

TEST_F(ConfirmRenamesTest, CandidatesAreTriedInOrderUntilOneIsIdentical) {
  WriteFile(L("differs.txt"), "other\n");
  WriteFile(L("same.txt"), "equal\n");
  WriteFile(L("also-same.txt"), "equal\n");
  WriteFile(U("new.txt"), "equal\n");
  EXPECT_EQ(Confirm({{"new.txt", {"differs.txt", "same.txt", "also-same.txt"}}}),
            (std::vector<Rename>{{"same.txt", "new.txt"}}));
}

TEST_F(ConfirmRenamesTest, EachDeletedPathIsRenamedOnceOnly) {
  WriteFile(L("old.txt"), "copied\n");
  WriteFile(U("copy-a.txt"), "copied\n");
  WriteFile(U("copy-b.txt"), "copied\n");
  EXPECT_EQ(Confirm({{"copy-a.txt", {"old.txt"}}, {"copy-b.txt", {"old.txt"}}}),
            (std::vector<Rename>{{"old.txt", "copy-a.txt"}}));
  // With a second identical deletion, the second copy takes that one.
  WriteFile(L("old2.txt"), "copied\n");
  EXPECT_EQ(Confirm({{"copy-a.txt", {"old.txt", "old2.txt"}}, {"copy-b.txt", {"old.txt", "old2.txt"}}}),
            (std::vector<Rename>{{"old.txt", "copy-a.txt"}, {"old2.txt", "copy-b.txt"}}));
}

TEST_F(ConfirmRenamesTest, AFileThatKeptItsNameGetsItsOriginalBeforeACopyUnderAnotherName) {
  fs::create_directory(L("p"));
  fs::create_directory(U("p2"));
  fs::create_directory(U("q"));
  WriteFile(L("p/f"), "moved\n");
  WriteFile(U("q/g"), "moved\n");
  WriteFile(U("p2/f"), "moved\n");
  // q/g comes first in path order, yet p2/f, which kept the name, is the rename.
  EXPECT_EQ(Confirm({{"p2/f", {"p/f"}}, {"q/g", {"p/f"}}}), (std::vector<Rename>{{"p/f", "p2/f"}}));
  EXPECT_EQ(Confirm({{"q/g", {"p/f"}}, {"p2/f", {"p/f"}}}), (std::vector<Rename>{{"p/f", "p2/f"}}));
}

TEST_F(ConfirmRenamesTest, AMissingSideIsNoRename) {
  WriteFile(U("new.txt"), "content\n");
  WriteFile(L("old.txt"), "content\n");
  EXPECT_TRUE(Confirm({{"new.txt", {"vanished.txt"}}, {"vanished-too.txt", {"old.txt"}}}).empty());
}

// --- PlanCommit with renames, and the plan carried out ---

class RenamePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "whiteouts are device nodes: making them needs root";
    for (const char* d : {"live", "upper", "removed"}) fs::create_directory(temp_ / d);
    live_.reset(open((temp_ / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    upper_.reset(open((temp_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    removed_.reset(open((temp_ / "removed").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    // The sandbox renamed old.txt to new.txt: a whiteout and a copy with the same content.
    WriteFile(L("old.txt"), "renamed content\n", 0644);
    ASSERT_EQ(mknod(U("old.txt").c_str(), S_IFCHR, makedev(0, 0)), 0);
    WriteFile(U("new.txt"), "renamed content\n", 0644);
  }
  std::string L(const std::string& p) { return temp_ / ("live/" + p); }
  std::string U(const std::string& p) { return temp_ / ("upper/" + p); }
  CommitPlan Plan(const RenameMap& renames) {
    std::vector<RootChanges> changes = {{0, ScanChanges(live_.get(), upper_.get(), testing::Myself())}};
    return PlanCommit(changes, {live_.get()}, {upper_.get()}, {""}, renames);
  }

  ScopedTempDir temp_;
  UniqueFd live_, upper_, removed_;
};

TEST_F(RenamePlanTest, ARenameIsOneMoveOfTheLiveEntry) {
  CommitStep move;
  move.seq = 0;
  move.root = 0;
  move.path = "new.txt";
  move.action = StepAction::kMove;
  move.old_ino = InodeOf(L("old.txt"));
  move.from = "old.txt";
  CommitPlan plan = Plan({{{0, "new.txt"}, "old.txt"}});
  EXPECT_EQ(plan.steps, std::vector<CommitStep>{move});  // no kRemove of old.txt, no kPlace of new.txt
  EXPECT_TRUE(plan.skipped.empty());
}

TEST_F(RenamePlanTest, WithoutTheRenameMapTheSameChangesArePlacedAndRemoved) {
  // The contrast to the move: what the planner does with these changes when told of no rename.
  CommitPlan plan = Plan({});
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].action, StepAction::kPlace);
  EXPECT_EQ(plan.steps[1].action, StepAction::kRemove);
}

TEST_F(RenamePlanTest, ARenameWithANewModeIsAMoveThenAChmod) {
  chmod(U("new.txt").c_str(), 0755);
  CommitPlan plan = Plan({{{0, "new.txt"}, "old.txt"}});
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.steps[0].action, StepAction::kMove);
  EXPECT_EQ(plan.steps[0].from, "old.txt");
  CommitStep chmod_step;
  chmod_step.seq = 1;
  chmod_step.root = 0;
  chmod_step.path = "new.txt";
  chmod_step.action = StepAction::kChmod;
  chmod_step.old_mode = 0644;
  chmod_step.new_mode = 0755;
  EXPECT_EQ(plan.steps[1], chmod_step);
}

TEST_F(RenamePlanTest, ARenameWhoseLiveSourceIsGoneFallsBackToPlacingTheCopy) {
  std::vector<RootChanges> changes = {{0, ScanChanges(live_.get(), upper_.get(), testing::Myself())}};
  fs::remove(L("old.txt"));  // deleted live between the scan and the commit
  CommitPlan plan = PlanCommit(changes, {live_.get()}, {upper_.get()}, {""}, {{{0, "new.txt"}, "old.txt"}});
  CommitStep place;
  place.seq = 0;
  place.root = 0;
  place.path = "new.txt";
  place.action = StepAction::kPlace;
  place.new_ino = InodeOf(U("new.txt"));
  place.new_mode = 0644;
  EXPECT_EQ(plan.steps, std::vector<CommitStep>{place});
}

TEST_F(RenamePlanTest, ARenameIntoANewDirectoryCommitsKeepingTheInodeAndIsTakenBack) {
  fs::remove(U("new.txt"));
  fs::create_directory(U("moved"));
  chmod(U("moved").c_str(), 0755);
  WriteFile(U("moved/new.txt"), "renamed content\n", 0600);
  ino_t live_ino = InodeOf(L("old.txt"));
  CommitPlan plan = Plan({{{0, "moved/new.txt"}, "old.txt"}});
  // The directory first, then the move into it, then the sandbox's mode.
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].action, StepAction::kMakeDirectory);
  EXPECT_EQ(plan.steps[1].action, StepAction::kMove);
  EXPECT_EQ(plan.steps[2].action, StepAction::kChmod);
  std::vector<StepRoot> roots = {{live_.get(), upper_.get(), removed_.get()}};
  RollForward(plan.steps, roots);
  EXPECT_FALSE(fs::exists(fs::symlink_status(L("old.txt"))));
  EXPECT_EQ(InodeOf(L("moved/new.txt")), live_ino);
  EXPECT_EQ(ReadFile(L("moved/new.txt")), "renamed content\n");
  EXPECT_EQ(fs::status(L("moved/new.txt")).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  RollBack(plan.steps, roots);
  EXPECT_FALSE(fs::exists(fs::symlink_status(L("moved"))));
  EXPECT_EQ(InodeOf(L("old.txt")), live_ino);
  EXPECT_EQ(fs::status(L("old.txt")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
}

}  // namespace
}  // namespace sandboxd
