// Whether a committed rename (a kMove step) can still be undone: the moved entry must be where
// the commit put it, as it left it, and the path it came from must still be free.

#include "commit/undo_check.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <thread>

#include "unique_fd.h"
#include "helpers/commit_steps_apply.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

namespace fs = std::filesystem;
using testing::ScopedTempDir;
using testing::WriteFile;

int64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

class UndoCheckMoveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* d : {"live", "upper", "removed"}) fs::create_directory(temp_ / d);
    fs::create_directory(temp_ / "live/sub");
    WriteFile(temp_ / "live/old.txt", "moved content\n");
    live_.reset(open((temp_ / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    upper_.reset(open((temp_ / "upper").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    removed_.reset(open((temp_ / "removed").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat st;
    ASSERT_EQ(lstat((temp_ / "live/old.txt").c_str(), &st), 0);
    move_.path = "sub/new.txt";
    move_.action = StepAction::kMove;
    move_.old_ino = st.st_ino;
    move_.from = "old.txt";
    // The commit, carried out for real: old.txt now lives at sub/new.txt.
    RollForward({move_}, {{live_.get(), upper_.get(), removed_.get()}});
    finished_ns_ = NowNs();
  }

  std::vector<std::string> Conflicts(const std::string& prefix = "") {
    return FindUndoConflicts({move_}, {live_.get()}, {prefix}, finished_ns_);
  }

  ScopedTempDir temp_;
  UniqueFd live_, upper_, removed_;
  CommitStep move_;
  int64_t finished_ns_ = 0;
};

TEST_F(UndoCheckMoveTest, AMoveLeftAsCommittedCanBeUndone) { EXPECT_TRUE(Conflicts().empty()); }

TEST_F(UndoCheckMoveTest, TheMovedEntryReplacedSinceIsReported) {
  WriteFile(temp_ / "live/sub/new.tmp", "moved content\n");
  fs::rename(temp_ / "live/sub/new.tmp", temp_ / "live/sub/new.txt");
  EXPECT_EQ(Conflicts(), std::vector<std::string>{"sub/new.txt (replaced since the commit)"});
}

TEST_F(UndoCheckMoveTest, TheMovedEntryDeletedSinceIsReported) {
  fs::remove(temp_ / "live/sub/new.txt");
  EXPECT_EQ(Conflicts(), std::vector<std::string>{"sub/new.txt (deleted since the commit)"});
}

TEST_F(UndoCheckMoveTest, TheMovedEntryWrittenInPlaceSinceIsReported) {
  // Well past the file system's coarse clock, so the write's ctime is after the commit.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  WriteFile(temp_ / "live/sub/new.txt", "edited after the commit\n");
  EXPECT_EQ(Conflicts(), std::vector<std::string>{"sub/new.txt (changed since the commit)"});
}

TEST_F(UndoCheckMoveTest, ThePathItWasMovedFromCreatedAgainIsReportedWithThePrefix) {
  WriteFile(temp_ / "live/old.txt", "a new file at the old path\n");
  EXPECT_EQ(Conflicts("2/"), std::vector<std::string>{"2/old.txt (created again since the commit renamed it)"});
}

// An undo reads a commit's steps a page at a time: an entry added since to a directory the
// commit made is found whichever page its directory's step and the commit's own entries in it
// fall in, and the commit's own entries never are; the count goes on past the names kept.
TEST(UndoConflictFinderTest, EntriesAddedToADirectoryTheCommitMadeAreFoundAcrossPages) {
  ScopedTempDir temp;
  fs::create_directories(temp / "live/made/deep");
  for (const char* file : {"made/a", "made/b", "made/deep/c", "made/stranger", "made/deep/stranger2"}) WriteFile(temp / (std::string("live/") + file), "x\n");
  UniqueFd live(open((temp / "live").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  int64_t finished_ns = NowNs() + 1000000000;  // (nothing below counts as changed since)
  std::vector<CommitStep> steps;
  auto add = [&](const std::string& path, StepAction action) {
    CommitStep step;
    step.seq = steps.size();
    step.path = path;
    step.action = action;
    struct stat st;
    if (lstat((temp / ("live/" + path)).c_str(), &st) == 0) step.new_ino = st.st_ino;
    steps.push_back(step);
  };
  add("made", StepAction::kMakeDirectory);
  add("made/a", StepAction::kPlace);
  add("made/b", StepAction::kPlace);
  add("made/deep", StepAction::kMakeDirectory);
  add("made/deep/c", StepAction::kPlace);
  const std::vector<std::string> expected = {"made/deep/stranger2 (added since the commit)", "made/stranger (added since the commit)"};
  EXPECT_EQ(FindUndoConflicts(steps, {live.get()}, {""}, finished_ns), expected);
  for (size_t page = 1; page <= steps.size(); ++page) {
    UndoConflictFinder finder({live.get()}, {""}, finished_ns, {});
    for (size_t first = 0; first < steps.size(); first += page)
      finder.Check(std::vector<CommitStep>(steps.begin() + first, steps.begin() + std::min(steps.size(), first + page)));
    EXPECT_EQ(finder.Finish(), expected) << "pages of " << page;
  }
  UndoConflictFinder named_one({live.get()}, {""}, finished_ns, {}, 1);
  named_one.Check(steps);
  EXPECT_EQ(named_one.Finish().size(), 1u);
  EXPECT_EQ(named_one.count(), 2u);
}

}  // namespace
}  // namespace sandboxd
