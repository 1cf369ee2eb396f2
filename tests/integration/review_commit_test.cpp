// Review and partial commit as an unprivileged user, with real parts: approving one hunk of a
// three-hunk file, rejecting a file, decisions surviving a restart and lapsing when a job
// rewrites the file, conflicts with the live tree and --force, selectors that name nothing.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "numbered_lines.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class ReviewCommitTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "cat > three.txt"}, {.input = Lines(), .cwd = project_}).status, 0);
  }
  /// Commits a new directory in part, all, undoes both and commits the other part, checking
  /// what a job in sandbox `id` sees of it.
  void ShowsEveryFileAfterPartialCommits(const std::string& id);
  /// Writes the three-hunk edit of three.txt in the sandbox.
  void EditThreeHunks() {
    Job("sed -i -e 's/^line 2$/two/' -e 's/^line 15$/fifteen/' -e 's/^line 28$/twenty-eight/' three.txt");
  }
};

// diff --stat and --name-only sum the same diff up as git does: per file its lines added and
// removed, or its name alone; selectors and patterns narrow them as they narrow the diff.
TEST_F(ReviewCommitTest, DiffStatAndNameOnlySumTheDiffUp) {
  EditThreeHunks();
  Job("echo made > new.txt && rm c.txt");
  Result stat = Ctl({"diff", "--stat", id_});
  EXPECT_EQ(stat.status, 0) << stat.err;
  EXPECT_EQ(stat.out,
            " c.txt     |   1 -\n"
            " new.txt   |   1 +\n"
            " three.txt |   6 +++---\n"
            " 3 files changed, 4 insertions(+), 4 deletions(-)\n");
  Result names = Ctl({"diff", "--name-only", id_});
  EXPECT_EQ(names.out, "c.txt\nnew.txt\nthree.txt\n") << names.err;
  EXPECT_EQ(Ctl({"diff", "--name-only", "--include", "*.txt", "--exclude", "c.txt", id_}).out, "new.txt\nthree.txt\n");
  EXPECT_EQ(Ctl({"diff", "--stat", id_, "three.txt:2"}).out, " three.txt |   2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n");
  EXPECT_EQ(Ctl({"diff", "--stat", "--name-only", id_}).status, 2) << "the two forms exclude each other";
}

// A commit refused before anything moved (here: a selector that names nothing) leaves the
// sandbox as it was, mounted, while its unmount ran beside the commit's first reading.
TEST_F(ReviewCommitTest, ACommitRefusedForASelectorLeavesTheSandboxMountedAndWhole) {
  Job("echo made > made.txt");
  Result commit = Ctl({"commit", id_, "--all", "no-such-file.txt"});
  EXPECT_EQ(commit.status, 1);
  EXPECT_NE(commit.err.find("no-such-file.txt"), std::string::npos) << commit.err;
  EXPECT_NE(commit.err.find(id_), std::string::npos) << commit.err;
  EXPECT_FALSE(std::ifstream(project_ + "/made.txt").good()) << "a refused commit wrote to the live tree";
  Job("grep -qx made made.txt");  // the job's file, seen through the remounted sandbox
  ASSERT_EQ(Ctl({"commit", "--all", id_}).status, 0);
  EXPECT_TRUE(std::ifstream(project_ + "/made.txt").good());
}

TEST_F(ReviewCommitTest, OnlyTheApprovedHunkReachesTheLiveFile) {
  EditThreeHunks();
  Result diff = Ctl({"diff", id_, "three.txt"});
  ASSERT_EQ(diff.status, 0) << diff.err;
  ASSERT_EQ(CountOf(diff.out, "\n@@ "), 3u) << diff.out;

  Result approve = Ctl({"approve", id_, "three.txt:2"});
  ASSERT_EQ(approve.status, 0) << approve.err;
  Result changes = Ctl({"changes", id_});
  EXPECT_NE(changes.out.find("M three.txt [partial: hunks 2 approved, of 3]"), std::string::npos) << changes.out;

  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{15, "fifteen"}}));

  // What is left in the sandbox is exactly hunks 1 and 3, and the job's view is unchanged.
  Result left = Ctl({"diff", id_, "three.txt"});
  ASSERT_EQ(left.status, 0) << left.err;
  EXPECT_EQ(CountOf(left.out, "\n@@ "), 2u) << left.out;
  EXPECT_NE(left.out.find("+two\n"), std::string::npos) << left.out;
  EXPECT_NE(left.out.find("+twenty-eight\n"), std::string::npos) << left.out;
  EXPECT_EQ(left.out.find("fifteen"), std::string::npos) << left.out;
  Result seen = Ctl({"run", id_, "--", "cat", "three.txt"});
  EXPECT_EQ(seen.out, Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}}));

  // The rest commits later and the sandbox is then empty.
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}}));
  EXPECT_EQ(Ctl({"changes", id_}).out, "");
}

// A mode change is no hunk: a file taken hunk by hunk keeps its live mode, whatever the
// sandbox's is, and the mode goes live with the whole file. Before, the merged file took the
// sandbox's mode (found by the model test, where the owner had chmodded the live file).
TEST_F(ReviewCommitTest, AFileTakenHunkByHunkKeepsItsLiveMode) {
  EditThreeHunks();
  Job("chmod 600 three.txt");
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:2"}).status, 0);
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{15, "fifteen"}}));
  struct stat st;
  ASSERT_EQ(stat((project_ + "/three.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  ASSERT_EQ(stat((project_ + "/three.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}}));
}

// A directory the job made where a live file was (a type change) goes live with an approved file
// inside it only when it is approved too: it would remove the live file, which no one approved
// (found by issue 39's display-equals-commit property, seed 10: the diff of the file showed no
// deletion, and the commit deleted the live file).
TEST_F(ReviewCommitTest, AFileInADirectoryThatReplacesALiveFileNeedsTheDirectoryApproved) {
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "printf 'live\\n' > lib"}, {.cwd = project_}).status, 0);
  Job("rm lib && mkdir lib && echo new > lib/a.txt");
  ASSERT_EQ(Ctl({"approve", id_, "lib/a.txt"}).status, 0);
  Result refused = Ctl({"commit", id_});
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.err.find("the directory lib it needs replaces a live file that is not approved"), std::string::npos) << refused.err;
  EXPECT_EQ(ReadWhole(project_ + "/lib"), "live\n") << "the live file was removed unapproved";
  ASSERT_EQ(Ctl({"approve", id_, "lib"}).status, 0);
  Result committed = Ctl({"commit", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project_ + "/lib/a.txt"), "new\n");
}

// The live mode a file taken hunk by hunk keeps includes its set-user-ID bit: the owner's write
// of the merged content cleared it (as any write without CAP_FSETID does), after its mode had
// been set. Found by the display-equals-commit property (tests/model/display_commit_test.cpp).
TEST_F(ReviewCommitTest, AFileTakenHunkByHunkKeepsItsSetuidBit) {
  ASSERT_EQ(World().RunAs(kAlice, {"chmod", "4755", "three.txt"}, {.cwd = project_}).status, 0);
  // The job's write clears the bit in the sandbox too; it sets it again, so no mode changes.
  EditThreeHunks();
  Job("chmod 4755 three.txt");
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:2"}).status, 0);
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{15, "fifteen"}}));
  struct stat st;
  ASSERT_EQ(stat((project_ + "/three.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 04755u);
}

TEST_F(ReviewCommitTest, RejectedHunksStayRejectedAfterAPartialCommit) {
  EditThreeHunks();
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:1"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "three.txt:3"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{2, "two"}}));
  // Left: old hunk 2 (pending) and old hunk 3 (rejected), now numbered 1 and 2.
  Result changes = Ctl({"changes", id_});
  EXPECT_NE(changes.out.find("M three.txt [partial: hunks 2 rejected, of 2]"), std::string::npos) << changes.out;
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{2, "two"}, {15, "fifteen"}}));
  EXPECT_EQ(Ctl({"changes", id_}).out, "M three.txt [rejected]\n");
}

TEST_F(ReviewCommitTest, RejectedFilesStayInTheSandbox) {
  Job("echo sandbox >> a.txt && echo sandbox >> b.txt && echo new > n.txt");
  std::string a_before = ReadWhole(project_ + "/a.txt");
  ASSERT_EQ(Ctl({"reject", id_, "a.txt"}).status, 0);
  ASSERT_EQ(Ctl({"approve", id_, "b.txt", "n.txt"}).status, 0);
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a_before);
  EXPECT_NE(ReadWhole(project_ + "/b.txt").find("sandbox"), std::string::npos);
  EXPECT_EQ(ReadWhole(project_ + "/n.txt"), "new\n");
  EXPECT_EQ(Ctl({"changes", id_}).out, "M a.txt [rejected]\n");
  // --all approves pending changes only: a rejected one stays.
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/a.txt"), a_before);
}

// A job sees the live tree with its changes over it: what a partial commit took live out of a
// new directory is still there in the job's view, beside what stayed in the sandbox, also
// after the commit is undone and the directory is committed in part again.
TEST_F(ReviewCommitTest, APartlyCommittedNewDirectoryStillShowsEveryFileToJobs) {
  ShowsEveryFileAfterPartialCommits(id_);
}

// The same where the layers are on a file system of their own (a hard quota's image), so that
// every commit lands through a landing area.
TEST_F(ReviewCommitTest, APartlyCommittedNewDirectoryStillShowsEveryFileToJobsAcrossFileSystems) {
  ASSERT_EQ(Ctl({"destroy", id_}).status, 0);
  Result created = Ctl({"create", "--quota", "20M", project_});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ShowsEveryFileAfterPartialCommits(id);
  id_ = id;  // destroyed by TearDown
}

void ReviewCommitTest::ShowsEveryFileAfterPartialCommits(const std::string& id) {
  auto Job = [&](const std::string& script) { ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", script}).status, 0); };
  auto Changes = [&] { return Ctl({"changes", id}).out; };
  const std::string& id_ = id;
  Job("mkdir fresh && echo a > fresh/a && echo b > fresh/b");
  ASSERT_EQ(Ctl({"approve", id_, "fresh/a"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  Result seen = Ctl({"run", id_, "--", "sh", "-c", "cat fresh/a fresh/b"});
  EXPECT_EQ(seen.out, "a\nb\n") << seen.err;
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  // Each undo brings back the decisions that held before its commit: fresh/a was approved.
  EXPECT_EQ(Changes(), "A fresh\nA fresh/a [approved]\nA fresh/b\n");
  ASSERT_EQ(Ctl({"approve", id_, "fresh/b"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  seen = Ctl({"run", id_, "--", "sh", "-c", "cat fresh/a fresh/b"});
  EXPECT_EQ(seen.out, "a\nb\n") << seen.err;
}

// An undo after a discard puts a partly committed new directory back into the sandbox as the
// sandbox had it, mode included (found by the model test: it came back 0700, the mode of the
// commit's own working directories).
TEST_F(ReviewCommitTest, UndoAfterDiscardGivesADirectoryBackWithItsMode) {
  Job("mkdir fresh && chmod 755 fresh && echo a > fresh/a && echo b > fresh/b");
  ASSERT_EQ(Ctl({"approve", id_, "fresh/a"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  ASSERT_EQ(Ctl({"discard", id_}).status, 0);
  Result undo = Ctl({"undo", id_});
  ASSERT_EQ(undo.status, 0) << undo.err;
  Result mode = Ctl({"run", id_, "--", "stat", "-c", "%a", "fresh"});
  EXPECT_EQ(mode.out, "755\n") << mode.err;
}

TEST_F(ReviewCommitTest, NewDirectoriesGoWithAnApprovedFileInThem) {
  Job("mkdir -p d/e && echo x > d/e/x && echo y > d/y");
  ASSERT_EQ(Ctl({"approve", id_, "d/e/x"}).status, 0);
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/d/e/x"), "x\n");
  EXPECT_NE(access((project_ + "/d/y").c_str(), F_OK), 0) << "d/y was not approved";
  EXPECT_EQ(Ctl({"changes", id_}).out, "A d/y\n");
  EXPECT_EQ(Ctl({"run", id_, "--", "cat", "d/e/x", "d/y"}).out, "x\ny\n");
}

TEST_F(ReviewCommitTest, DecisionsSurviveARestartAndLapseWhenAJobRewritesTheFile) {
  Job("echo one >> a.txt && echo one >> b.txt");
  ASSERT_EQ(Ctl({"approve", id_, "a.txt"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "b.txt"}).status, 0);
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  EXPECT_EQ(Ctl({"changes", id_}).out, "M a.txt [approved]\nM b.txt [rejected]\n");
  Job("echo two >> a.txt");
  EXPECT_EQ(Ctl({"changes", id_}).out, "M a.txt\nM b.txt [rejected]\n");
}

TEST_F(ReviewCommitTest, AConflictIsRefusedUntilForced) {
  Job("echo sandbox >> a.txt && echo sandbox >> b.txt");
  // The owner edits the live a.txt after the sandbox was created.
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "echo live >> a.txt"}, {.cwd = project_}).status, 0);
  auto live = Snapshot(project_);
  const size_t log_start = World().DaemonLog().size();
  Result refused = Ctl({"commit", id_, "--all"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("conflicts with the live tree"), std::string::npos) << refused.err;
  // The daemon's sentence says what forcing does; sandboxctl says how.
  EXPECT_NE(refused.err.find("nothing was committed (a forced commit takes the sandbox's version anyway); sandboxctl commit --force does"),
            std::string::npos)
      << refused.err;
  // The log says so too, for an admin.
  EXPECT_NE(World().DaemonLog().find("did not go live: org.sandboxd.Sandbox1.Error.Conflict", log_start), std::string::npos)
      << World().DaemonLog().substr(log_start);
  EXPECT_NE(refused.err.find("a.txt"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("b.txt"), std::string::npos) << "b.txt did not change live: " << refused.err;
  EXPECT_EQ(Snapshot(project_), live) << "a refused commit changed the live tree";

  Result forced = Ctl({"commit", id_, "--all", "--force"});
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(ReadWhole(project_ + "/a.txt").find("live"), std::string::npos) << "forced: the sandbox's a.txt wins";
  EXPECT_EQ(Ctl({"changes", id_}).out, "");
}

TEST_F(ReviewCommitTest, TheSameEditMadeLiveIsNoConflict) {
  Job("echo same >> a.txt");
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "echo same >> a.txt"}, {.cwd = project_}).status, 0);
  Result commit = Ctl({"commit", id_, "--all"});
  EXPECT_EQ(commit.status, 0) << commit.err;
}

// `diff PATH:N` shows hunk N alone, under the file's header, and a hunk that does not exist is
// an error naming it.
TEST_F(ReviewCommitTest, DiffOfAHunkShowsThatHunkAlone) {
  EditThreeHunks();
  Result second = Ctl({"diff", id_, "three.txt:2"});
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_NE(second.out.find("diff --git a/three.txt b/three.txt"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("+fifteen"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("+two"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("+twenty-eight"), std::string::npos) << second.out;
  EXPECT_EQ(CountOf(second.out, "@@ -"), 1u) << second.out;
  Result outer = Ctl({"diff", id_, "three.txt:1", "three.txt:3"});
  EXPECT_EQ(CountOf(outer.out, "@@ -"), 2u) << outer.out;
  EXPECT_EQ(outer.out.find("+fifteen"), std::string::npos) << outer.out;
  // The whole file named too: the whole file.
  EXPECT_EQ(CountOf(Ctl({"diff", id_, "three.txt:1", "three.txt"}).out, "@@ -"), 3u);
  Result missing = Ctl({"diff", id_, "three.txt:7"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no hunk three.txt:7 (three.txt has 3 hunks) in sandbox " + id_), std::string::npos) << missing.err;
  EXPECT_EQ(missing.err.find("stopped"), std::string::npos) << "nothing was under way: " << missing.err;
  EXPECT_EQ(missing.out, "");
}

TEST_F(ReviewCommitTest, SelectorsThatNameNothingAreRefused) {
  EditThreeHunks();
  Result unknown = Ctl({"approve", id_, "nope.txt"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("nope.txt"), std::string::npos) << unknown.err;
  Result hunk = Ctl({"approve", id_, "three.txt:4"});
  EXPECT_EQ(hunk.status, 1);
  EXPECT_NE(hunk.err.find("has 3 hunks"), std::string::npos) << hunk.err;
  Job("echo new > n.txt");
  Result whole = Ctl({"approve", id_, "n.txt:1"});
  EXPECT_EQ(whole.status, 1);
  EXPECT_NE(whole.err.find("whole"), std::string::npos) << whole.err;
  Result both = Ctl({"approve", id_, "--all", "n.txt"});
  EXPECT_EQ(both.status, 2) << both.err;
  EXPECT_EQ(Ctl({"changes", id_}).out, "A n.txt\nM three.txt\n") << "a refused decision changed nothing";
}

TEST_F(ReviewCommitTest, UndoRestoresTheLiveTreeAndReturnsTheChanges) {
  auto before = Snapshot(project_);
  Job("echo more >> a.txt && rm b.txt && mkdir -p nd && echo n > nd/n.txt && ln -sf c.txt link && chmod 600 c.txt");
  Result changes = Ctl({"changes", id_});
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  auto after = Snapshot(project_);
  ASSERT_NE(after, before);

  Result undo = Ctl({"undo", id_});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(Snapshot(project_), before) << "undo did not restore the live tree byte for byte";
  EXPECT_EQ(Ctl({"changes", id_}).out, changes.out) << "the undone changes are not back in the sandbox";
  // Nothing left to undo; the changes commit again as they did.
  Result again = Ctl({"undo", id_});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("no commit to undo"), std::string::npos) << again.err;
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  EXPECT_EQ(Snapshot(project_), after);
}

TEST_F(ReviewCommitTest, UndoOfAPartialCommitKeepsWhatWasLeft) {
  EditThreeHunks();
  Job("echo x > x.txt");
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:2"}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  ASSERT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{15, "fifteen"}}));
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines());
  EXPECT_EQ(Ctl({"run", id_, "--", "cat", "three.txt"}).out, Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}}));
  // With the decisions that held before the commit (DESIGN, "Data safety").
  EXPECT_EQ(Ctl({"changes", id_}).out, "M three.txt [partial: hunks 2 approved, of 3]\nA x.txt\n");
}

TEST_F(ReviewCommitTest, UndoRefusesWhenTheLiveTreeMovedOn) {
  Job("echo more >> a.txt && echo n > n.txt");
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "echo mine >> a.txt"}, {.cwd = project_}).status, 0);
  auto live = Snapshot(project_);
  Result undo = Ctl({"undo", id_});
  EXPECT_EQ(undo.status, 1);
  EXPECT_NE(undo.err.find("a.txt (changed since the commit)"), std::string::npos) << undo.err;
  EXPECT_EQ(undo.err.find("n.txt"), std::string::npos) << undo.err;
  EXPECT_EQ(Snapshot(project_), live) << "a refused undo changed the live tree";
}

// Undo again takes the commit before it back, also where both commits changed the same file:
// the first undo moved that file (and so its ctime) itself, which is no change of the owner's.
TEST_F(ReviewCommitTest, UndoAgainTakesTheCommitBeforeItBackOverTheSameFile) {
  auto before = Snapshot(project_);
  Job("echo first >> a.txt && echo n > n.txt");
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  auto after_first = Snapshot(project_);
  Job("echo second >> a.txt && rm n.txt");
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  Result undo = Ctl({"undo", id_});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(Snapshot(project_), after_first);
  undo = Ctl({"undo", id_});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(Snapshot(project_), before);
}

// ... but not over a change of the owner's that a forced commit went over: that commit's undo
// puts the owner's version back, and the commit before it must not take it away.
TEST_F(ReviewCommitTest, UndoAgainRefusesWhereAForcedCommitWentOverALiveChange) {
  Job("echo first >> a.txt");
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  // The owner's edit comes after the job that changes a.txt again: the job did not see it.
  Job("echo second >> a.txt");
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "echo mine >> a.txt"}, {.cwd = project_}).status, 0);
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 1) << "the live change is a conflict";
  ASSERT_EQ(Ctl({"commit", id_, "--all", "--force"}).status, 0);
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  const std::string mine = ReadWhole(project_ + "/a.txt");
  EXPECT_NE(mine.find("mine"), std::string::npos);
  auto live = Snapshot(project_);
  Result again = Ctl({"undo", id_});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("a.txt (changed since the commit)"), std::string::npos) << again.err;
  EXPECT_EQ(Snapshot(project_), live);
}

// Something in the sandbox's view (a shell of root's cd'd into it through the daemon's mount
// namespace, the only one it is mounted in; or the copy a job that just ended leaves for a
// moment) keeps it busy: a commit waits for it to be let go, up to 5 s, and
// only then refuses, naming the view, with nothing written. (The load test met the job's case:
// such commits were refused at once.)
TEST_F(ReviewCommitTest, ACommitWaitsForItsViewToBeLetGoAndOtherwiseRefusesNamingIt) {
  Job("echo held > held.txt");
  const std::string view = World().MergedView(id_);
  auto hold = [&](const char* seconds) {
    return std::thread([view, seconds] { World().RunAs("root", {"sh", "-c", "cd '" + view + "' && sleep " + seconds}); });
  };
  std::thread briefly = hold("1.5");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Result waited = Ctl({"commit", id_, "--all"});
  briefly.join();
  EXPECT_EQ(waited.status, 0) << waited.err;
  EXPECT_EQ(ReadWhole(project_ + "/held.txt"), "held\n");

  Job("echo again > again.txt");
  std::thread long_hold = hold("9");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  Result refused = Ctl({"commit", id_, "--all"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("the overlay at " + World().dir() + "/run/" + id_ + "/0 is still in use"), std::string::npos) << refused.err;
  EXPECT_NE(access((project_ + "/again.txt").c_str(), F_OK), 0) << "a refused commit wrote something";
  long_hold.join();
  Result after = Ctl({"commit", id_, "--all"});
  EXPECT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(ReadWhole(project_ + "/again.txt"), "again\n");
}

}  // namespace
}  // namespace sandboxd::it
