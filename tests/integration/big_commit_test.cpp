// A commit of the whole change set is read from the upper, checked and journaled a page at a
// time, and carried out by the helper a page of steps at a time, so that a million changes
// commit in bounded memory (bench/scale shows the memory); so is a commit of a part. Here the
// change set spans several pages of each: a conflict on the last page still refuses the whole
// commit before anything moves, a forced commit puts every page live, and the undo takes every
// page back.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <string>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

/// More changes than a page of changes (4,096) and steps than a page of steps (8,192).
constexpr int kFiles = 9000;

class BigCommitTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override { ASSERT_EQ(Live("echo live > zz-last.txt").status, 0); }
  Result Live(const std::string& script) const { return World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = project_}); }
  long ChangeCount() const {
    std::string changes = Changes();
    return std::count(changes.begin(), changes.end(), '\n');
  }
  bool LiveExists(const std::string& path) const {
    struct stat st;
    return lstat((project_ + "/" + path).c_str(), &st) == 0;
  }
  int LiveFiles() const {
    Result count = Live("find . -type f | wc -l");
    return std::stoi(count.out);
  }
};

TEST_F(BigCommitTest, AConflictOnTheLastPageRefusesAllAndEveryPageGoesLiveAndComesBack) {
  int before = LiveFiles();
  // Nine directories of a thousand files; the file the owner then edits live sorts last.
  Job("for d in 1 2 3 4 5 6 7 8 9; do mkdir d$d && (cd d$d && seq 1000 | xargs touch); done; echo sandbox > zz-last.txt");
  ASSERT_EQ(Live("echo edited live > zz-last.txt").status, 0);

  Result refused = Ctl({"commit", "--all", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("zz-last.txt"), std::string::npos) << refused.err;
  EXPECT_FALSE(LiveExists("d1")) << "a refused commit put its first pages live";
  EXPECT_EQ(ReadWhole(project_ + "/zz-last.txt"), "edited live\n");
  Result none = Ctl({"undo", id_});
  EXPECT_EQ(none.status, 1) << "a refused commit left one to undo: " << none.out;
  EXPECT_EQ(ChangeCount(), kFiles + 9 + 1);

  Result forced = Ctl({"commit", "--all", "--force", id_});
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(forced.err.find("Committed " + std::to_string(kFiles + 10) + " changes"), std::string::npos) << forced.err;
  EXPECT_EQ(LiveFiles(), before + kFiles);
  EXPECT_TRUE(LiveExists("d1/1") && LiveExists("d9/1000"));
  EXPECT_EQ(ReadWhole(project_ + "/zz-last.txt"), "sandbox\n");
  EXPECT_EQ(Changes(), "");

  Result undone = Ctl({"undo", id_});
  ASSERT_EQ(undone.status, 0) << undone.err;
  EXPECT_EQ(LiveFiles(), before);
  EXPECT_FALSE(LiveExists("d1") || LiveExists("d9"));
  EXPECT_EQ(ReadWhole(project_ + "/zz-last.txt"), "edited live\n");
  EXPECT_EQ(ChangeCount(), kFiles + 9 + 1);
}

// A commit of part of the change set streams the same way: what it takes is checked, staged and
// planned a page at a time. A conflict on its last page refuses it all, and what was staged of
// the pages before comes back into the sandbox; forced, every page but the rejected file goes
// live, and the undo takes every page back.
TEST_F(BigCommitTest, APartialCommitSpanningPagesIsAllOrNothingAndLeavesTheRejectedFileInTheSandbox) {
  int before = LiveFiles();
  Job("for d in 1 2 3 4 5 6 7 8 9; do mkdir d$d && (cd d$d && seq 1000 | xargs touch); done; echo sandbox > zz-last.txt");
  ASSERT_EQ(Ctl({"reject", id_, "d5/500"}).status, 0);
  ASSERT_EQ(Live("echo edited live > zz-last.txt").status, 0);

  Result refused = Ctl({"commit", "--all", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("zz-last.txt"), std::string::npos) << refused.err;
  EXPECT_FALSE(LiveExists("d1")) << "a refused commit put its first pages live";
  EXPECT_EQ(ChangeCount(), kFiles + 9 + 1);
  Result seen = Ctl({"run", id_, "--", "sh", "-c", "ls d1 | wc -l"});
  EXPECT_EQ(seen.out, "1000\n") << "what was staged did not come back: " << seen.err;

  Result forced = Ctl({"commit", "--all", "--force", id_});
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(forced.err.find("Committed " + std::to_string(kFiles + 9) + " changes"), std::string::npos) << forced.err;
  EXPECT_EQ(LiveFiles(), before + kFiles - 1);
  EXPECT_TRUE(LiveExists("d1/1") && LiveExists("d9/1000") && LiveExists("d5/499"));
  EXPECT_FALSE(LiveExists("d5/500"));
  EXPECT_EQ(Changes(), "A d5/500 [rejected]\n");

  Result undone = Ctl({"undo", id_});
  ASSERT_EQ(undone.status, 0) << undone.err;
  EXPECT_EQ(LiveFiles(), before);
  EXPECT_FALSE(LiveExists("d1") || LiveExists("d9"));
  EXPECT_EQ(ChangeCount(), kFiles + 9 + 1);
}

/// Waits (up to 60 s) until the daemon's journal holds a commit in state "planning": exits 0
/// then, 1 if none came. Reads the database beside the daemon (WAL readers do not block it).
constexpr const char* kWaitForPlanning = R"py(
import sqlite3, sys, time
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=5)
end = time.time() + 60
while time.time() < end:
    if db.execute("SELECT COUNT(*) FROM commits WHERE state = 'planning'").fetchone()[0]:
        sys.exit(0)
    time.sleep(0.002)
sys.exit(1)
)py";

// A daemon killed while it plans a commit of the whole change set (checking and journaling it
// a page at a time, before anything moves) moved nothing: at start-up the commit is forgotten
// with its steps, and the sandbox then commits as it would have.
TEST_F(BigCommitTest, ADaemonKilledWhilePlanningMovedNothingAndForgetsThePlan) {
  int before = LiveFiles();
  Job("for d in $(seq 1 30); do mkdir d$d && (cd d$d && seq 1000 | xargs touch); done");
  const std::string db = World().dir() + "/state/sandboxd.db";
  pid_t client = StartSandboxctl(kAlice, {"commit", "--all", id_});
  Result planning = World().RunAs("root", {"/usr/bin/python3", "-c", kWaitForPlanning, db});
  World().KillDaemon();
  waitpid(client, nullptr, 0);
  ASSERT_EQ(planning.status, 0) << "the commit was never seen planning: " << planning.err;
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();

  EXPECT_EQ(LiveFiles(), before) << "a commit killed while planning moved files";
  EXPECT_NE(World().DaemonLog().find("was cut off before it started; nothing of it had moved"), std::string::npos);
  // Neither the commit nor its steps are left (this sandbox had no other commit).
  Result left = World().RunAs("root", {"/usr/bin/python3", "-c",
                                       "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
                                       "print(db.execute('SELECT COUNT(*) FROM commits WHERE sandbox_id = ?', (sys.argv[2],)).fetchone()[0], "
                                       "db.execute('SELECT COUNT(*) FROM commit_steps WHERE commit_id NOT IN (SELECT id FROM commits)').fetchone()[0])",
                                       db, id_});
  EXPECT_EQ(Trim(left.out), "0 0") << "the plan outlived the restart: " << left.err;
  EXPECT_EQ(ChangeCount(), 30030);
  Result committed = Ctl({"commit", "--all", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(LiveFiles(), before + 30000);
}

}  // namespace
}  // namespace sandboxd::it
