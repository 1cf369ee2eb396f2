// Undo takes the last commit back (DESIGN, "Data safety"): the live tree as before it, and every
// decision that held before it holds again (issue 39: rejections came back pending, .git/index
// and the rejected hunks of a partly committed file).

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "numbered_lines.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class UndoDecisionsTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "cat > c.txt && mkdir .git && printf 'index 1' > .git/index"},
                            {.input = Lines(), .cwd = project_})
                  .status,
              0);
  }
  /// `--json changes` by path.
  std::map<std::string, nlohmann::json> Listed() {
    Result listed = Ctl({"--json", "changes", id_});
    EXPECT_EQ(listed.status, 0) << listed.err;
    std::map<std::string, nlohmann::json> by_path;
    for (const auto& entry : nlohmann::json::parse(listed.out)) by_path[entry["path"]] = entry;
    return by_path;
  }
  /// Each change's review, with the hunks of one decided hunk by hunk.
  std::string Decisions() {
    std::string text;
    for (const auto& [path, entry] : Listed()) {
      text += path + ": " + entry["review"].get<std::string>();
      if (entry.contains("approved_hunks")) text += " approved " + entry["approved_hunks"].dump();
      if (entry.contains("rejected_hunks")) text += " rejected " + entry["rejected_hunks"].dump();
      text += "\n";
    }
    return text;
  }
};

TEST_F(UndoDecisionsTest, EveryDecisionThatHeldBeforeTheCommitHoldsAgainAfterUndo) {
  Job("sed -i -e 's/^line 2$/two/' -e 's/^line 28$/twenty-eight/' c.txt && printf 'index 2' > .git/index && echo new > e.txt && "
      "echo other > f.txt && echo b >> b.txt");
  ASSERT_EQ(Ctl({"approve", id_, "\"c.txt\":1", "e.txt", "b.txt"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "\"c.txt\":2", ".git/index", "f.txt"}).status, 0);
  const std::string before = Decisions();
  ASSERT_NE(before.find("c.txt: partial approved [1] rejected [2]"), std::string::npos) << before;

  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/c.txt"), Lines({{2, "two"}}));
  EXPECT_EQ(ReadWhole(project_ + "/e.txt"), "new\n");

  Result undo = Ctl({"undo", id_});
  ASSERT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(ReadWhole(project_ + "/c.txt"), Lines()) << "the live tree is as before the commit";
  EXPECT_EQ(Decisions(), before);

  // And it lands again exactly as approved.
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/c.txt"), Lines({{2, "two"}}));
  EXPECT_EQ(ReadWhole(project_ + "/.git/index"), "index 1");
}

// The same across a restart between the commit and the undo: the decisions wait in the store.
TEST_F(UndoDecisionsTest, TheDecisionsComeBackAfterARestartToo) {
  Job("printf 'index 2' > .git/index && echo new > e.txt");
  ASSERT_EQ(Ctl({"approve", id_, "e.txt"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, ".git/index"}).status, 0);
  const std::string before = Decisions();
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  EXPECT_EQ(Decisions(), before);
}

// A mode change, approved, comes back approved (found by the display-equals-commit property:
// a live file's chmod 000, approved, came back pending: the commit's chmod and the undo's moved
// the live inode's ctime, which the decision's fingerprint holds, and only work that moved names
// was told from the owner's own edits). The same for a readable mode and beside new files.
TEST_F(UndoDecisionsTest, AnApprovedModeChangeComesBackApproved) {
  Job("chmod 000 c.txt && chmod 600 b.txt && echo new > e.txt && chmod 000 e.txt");
  ASSERT_EQ(Ctl({"approve", id_, "c.txt", "b.txt", "e.txt"}).status, 0);
  const std::string before = Decisions();
  ASSERT_EQ(before, "b.txt: approved\nc.txt: approved\ne.txt: approved\n");
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  EXPECT_EQ(Decisions(), before);
}

// A rejected deletion inside a directory the job made anew (opaque: rm -rf and mkdir) comes
// back rejected (found by the display-equals-commit property: it came back pending).
TEST_F(UndoDecisionsTest, ARejectedDeletionInADirectoryMadeAnewComesBackRejected) {
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "mkdir d && echo keep > d/keep && echo gone > d/gone"}, {.cwd = project_}).status, 0);
  Job("rm -rf d && mkdir d && echo new > d/new");
  ASSERT_EQ(Ctl({"approve", id_, "d/new", "d/gone"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "d/keep"}).status, 0);
  const std::string before = Decisions();
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/d/keep"), "keep\n");
  EXPECT_EQ(Decisions(), "d/keep: rejected\n") << "the commit dropped the rejection";
  ASSERT_EQ(Ctl({"undo", id_}).status, 0);
  EXPECT_EQ(Decisions(), before);
}

}  // namespace
}  // namespace sandboxd::it
