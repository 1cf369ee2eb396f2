// `sandboxctl review` as a person uses it: on a pseudo-terminal, keys typed one at a time, each
// decision checked through `changes` and a commit. Also: without a terminal it refuses (exit
// 2), the terminal is given back after a signal, and `try` offers the review.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <utmp.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "conversation.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// The question about a hunk, up to where it offers s or not (only a hunk that can split).
constexpr const char* kHunkQuestion = "Approve this hunk [y,n,q,a,d,j,J,k,K";
constexpr const char* kChangeQuestion = "Approve this change [y,n,q,j,?]? ";

std::string HunkQuestion(int hunk, int of) {
  return "(" + std::to_string(hunk) + "/" + std::to_string(of) + ") " + kHunkQuestion;
}

/// three.txt holds 30 numbered lines; edits at lines 2, 15 and 28 are three hunks apart.
const std::string kThirtyLines = "seq -f 'line %g' 30";
const std::string kEditFifteen = "s/^line 15$/fifteen/";
const std::string kThreeEdits = "-e 's/^line 2$/two/' -e '" + kEditFifteen + "' -e 's/^line 28$/twenty-eight/'";

/// What `sh -c SCRIPT` prints, run as alice in `dir`: her files are read as she reads them.
std::string AsAlice(const std::string& script, const std::string& dir) {
  return World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = dir}).out;
}

/// A sandbox over a fresh project of alice's that holds three.txt beside the harness's files.
class ReviewTtyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    AsAlice(kThirtyLines + " > three.txt", project_);
    id_ = Trim(Sandboxctl({"create", project_}));
    ASSERT_FALSE(id_.empty());
  }
  void TearDown() override {
    if (!id_.empty()) Sandboxctl({"destroy", id_});
  }
  /// `sandboxctl ARGS...` as alice, which is to succeed; what it printed on stdout.
  std::string Sandboxctl(const std::vector<std::string>& args) {
    Result done = World().Sandboxctl(kAlice, args);
    EXPECT_EQ(done.status, 0) << "sandboxctl " << args.front() << ": " << done.err;
    return done.out;
  }
  void InSandbox(const std::string& script) { Sandboxctl({"run", id_, "--", "sh", "-c", script}); }
  void EditThreeHunks() { InSandbox("sed -i " + kThreeEdits + " three.txt"); }
  /// `sandboxctl --json changes` by path.
  std::map<std::string, nlohmann::json> Changes() {
    std::map<std::string, nlohmann::json> changes;
    for (const auto& entry : nlohmann::json::parse(Sandboxctl({"--json", "changes", id_}))) changes[entry["path"]] = entry;
    return changes;
  }

  std::string project_;
  std::string id_;
};

// `changes` on a terminal colours as git status does: what the next commit takes green, what
// waits for a decision red, a rejected change dim; not at all when not a terminal.
TEST_F(ReviewTtyTest, ChangesOnATerminalAreColouredByTheirDecision) {
  InSandbox("echo a > approved.txt; echo p > pending.txt; echo r > rejected.txt");
  Sandboxctl({"approve", id_, "approved.txt"});
  Sandboxctl({"reject", id_, "rejected.txt"});
  Conversation listed(kAlice, project_, {"changes", id_});
  EXPECT_EQ(listed.Finish(), 0) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "\033[32mA approved.txt  2 B [approved]\033[m")) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "\033[31mA pending.txt  2 B\033[m")) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "\033[2mA rejected.txt  2 B [rejected]\033[m")) << listed.screen();
  std::string piped = Sandboxctl({"changes", id_});
  EXPECT_EQ(piped.find('\033'), std::string::npos) << "colour without a terminal:\n" << piped;
}

// On a terminal each file shows its size (a modification its old and new ones, a deletion the
// live file's); --json carries them for scripts, as numbers of bytes; a pipe gets plain lines.
TEST_F(ReviewTtyTest, ChangesShowTheSizesOfFiles) {
  InSandbox("printf 'line 31\\n' >> three.txt; head -c 5000 /dev/zero > big.bin; rm c.txt; mkdir newdir");
  Conversation listed(kAlice, project_, {"changes", id_});
  EXPECT_EQ(listed.Finish(), 0) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "M three.txt  231 B -> 239 B")) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "A big.bin  4.9 KiB")) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "D c.txt  6 B")) << listed.screen();
  EXPECT_TRUE(Contains(listed.screen(), "A newdir\033[m")) << "a directory has no size shown:\n" << listed.screen();
  auto changes = Changes();
  EXPECT_EQ(changes["three.txt"]["old_size"], 231);
  EXPECT_EQ(changes["three.txt"]["new_size"], 239);
  EXPECT_EQ(changes["big.bin"]["new_size"], 5000);
  EXPECT_FALSE(changes["big.bin"].contains("old_size"));
  EXPECT_EQ(changes["c.txt"]["old_size"], 6);
  EXPECT_FALSE(changes["newdir"].contains("new_size"));
  EXPECT_EQ(Sandboxctl({"changes", id_}), "A big.bin\nD c.txt\nA newdir\nM three.txt\n");
}

TEST_F(ReviewTtyTest, NoYesNoApprovesTheMiddleHunkAndCommitWritesOnlyIt) {
  EditThreeHunks();
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.WaitFor("three.txt (modified file)")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 3), "n")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(2, 3), "y")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(3, 3), "n")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "1 approved, 2 rejected, 0 left pending.")) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "sandboxctl commit " + id_)) << review.screen();
  // On a terminal, in git's colours: the header bold, the hunk's lines red and green.
  EXPECT_TRUE(Contains(review.screen(), "\033[1mdiff --git a/three.txt b/three.txt\033[m")) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "\033[31m-line 15\033[m")) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "\033[32m+fifteen\033[m")) << review.screen();

  auto changes = Changes();
  ASSERT_TRUE(changes.count("three.txt"));
  EXPECT_EQ(changes["three.txt"]["review"], "partial") << changes["three.txt"].dump();
  EXPECT_EQ(changes["three.txt"]["approved_hunks"], nlohmann::json::array({2})) << changes["three.txt"].dump();
  EXPECT_EQ(changes["three.txt"]["rejected_hunks"], nlohmann::json::array({1, 3})) << changes["three.txt"].dump();
  Sandboxctl({"commit", id_});
  EXPECT_EQ(AsAlice("cat three.txt", project_), AsAlice(kThirtyLines + " | sed '" + kEditFifteen + "'", project_));
}

TEST_F(ReviewTtyTest, AOnTheFirstHunkApprovesTheWholeFile) {
  EditThreeHunks();
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 3), "a")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), HunkQuestion(2, 3))) << "a asked about the rest: " << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "3 approved, 0 rejected, 0 left pending.")) << review.screen();
  EXPECT_EQ(Sandboxctl({"changes", id_}), "M three.txt [approved]\n");
}

TEST_F(ReviewTtyTest, DOnALaterHunkRejectsTheRestAndAnEarlierDecisionIsAskedAgain) {
  EditThreeHunks();
  Sandboxctl({"approve", id_, "three.txt:1"});
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.WaitFor("three.txt (modified file, partial)")) << review.screen();
  ASSERT_TRUE(review.WaitFor("(already approved)")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 3), "j")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(2, 3), "d")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), HunkQuestion(3, 3))) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "1 approved, 2 rejected, 0 left pending.")) << review.screen();
  auto three = Changes()["three.txt"];
  EXPECT_EQ(three["approved_hunks"], nlohmann::json::array({1})) << three.dump();
  EXPECT_EQ(three["rejected_hunks"], nlohmann::json::array({2, 3})) << three.dump();
}

// The moving keys of git add -p: J and K step through the hunks undecided, k goes back to the
// last undecided one (there is none once the earlier ones are decided), and s says a hunk of
// one run of changes cannot be split, as git does, and asks again.
TEST_F(ReviewTtyTest, TheMovingKeysOfGitAddPStepThroughTheHunks) {
  EditThreeHunks();
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 3), "J")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(2, 3), "K")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 3), "y")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(2, 3), "s")) << review.screen();
  ASSERT_TRUE(review.WaitFor("Sorry, cannot split this hunk")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(2, 3), "n")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(3, 3), "k")) << review.screen();
  ASSERT_TRUE(review.WaitFor("No previous undecided hunk")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(3, 3), "y")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "2 approved, 1 rejected, 0 left pending.")) << review.screen();
  auto three = Changes()["three.txt"];
  EXPECT_EQ(three["approved_hunks"], nlohmann::json::array({1, 3})) << three.dump();
  EXPECT_EQ(three["rejected_hunks"], nlohmann::json::array({2})) << three.dump();
}

// s splits a hunk of two runs of changes into its parts, as git add -p does: each shown with
// the unchanged lines around it and a "@@" line of its own, numbered as PATH:N.M names them,
// and decided on its own; only the approved part goes live.
TEST_F(ReviewTtyTest, SSplitsAHunkIntoItsParts) {
  InSandbox("sed -i -e 's/^line 2$/two/' -e 's/^line 5$/five/' three.txt");
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 1), "s")) << review.screen();
  ASSERT_TRUE(review.WaitFor("Split into 2 hunks: 1.1 to 1.2")) << review.screen();
  const std::string first = std::string("(1.1/1) ") + kHunkQuestion, second = std::string("(1.2/1) ") + kHunkQuestion;
  ASSERT_TRUE(review.WaitFor("@@ -1,4 +1,4 @@")) << review.screen();
  ASSERT_TRUE(review.Answer(first, "s")) << review.screen();  // a part is one run: no further
  ASSERT_TRUE(review.WaitFor("Sorry, cannot split this hunk")) << review.screen();
  ASSERT_TRUE(review.Answer(first, "y")) << review.screen();
  ASSERT_TRUE(review.WaitFor("@@ -3,6 +3,6 @@")) << review.screen();
  ASSERT_TRUE(review.Answer(second, "n")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  // s was offered for the hunk of two runs, and not for its parts, which are one run each.
  EXPECT_TRUE(Contains(review.screen(), "(1/1) Approve this hunk [y,n,q,a,d,j,J,k,K,s,?]? ")) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "(1.1/1) Approve this hunk [y,n,q,a,d,j,J,k,K,?]? ")) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), "(1.2/1) Approve this hunk [y,n,q,a,d,j,J,k,K,s")) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "1 approved, 1 rejected, 0 left pending.")) << review.screen();
  auto three = Changes()["three.txt"];
  EXPECT_EQ(three["split_hunks"], nlohmann::json::array({1})) << three.dump();
  Sandboxctl({"commit", id_});
  std::string live = AsAlice("cat three.txt", project_);
  EXPECT_TRUE(Contains(live, "\ntwo\n") && Contains(live, "\nline 5\n")) << live;
  EXPECT_EQ(Sandboxctl({"changes", id_}), "M three.txt [rejected]\n");
}

TEST_F(ReviewTtyTest, QStopsAndLeavesTheRestPending) {
  InSandbox("echo more >> a.txt && echo more >> b.txt && echo new > n.txt");
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 1), "?")) << review.screen();
  ASSERT_TRUE(review.WaitFor("j - leave this hunk undecided, see the next undecided hunk")) << "? printed no help: " << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 1), "y")) << review.screen();  // a.txt
  ASSERT_TRUE(review.WaitFor("b.txt (modified file)")) << review.screen();
  ASSERT_TRUE(review.Answer(HunkQuestion(1, 1), "q")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), "n.txt")) << "asked on after q: " << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "1 approved, 0 rejected, 2 left pending.")) << review.screen();
  EXPECT_EQ(Sandboxctl({"changes", id_}), "M a.txt [approved]\nM b.txt\nA n.txt\n");
}

TEST_F(ReviewTtyTest, ANewFileIsApprovedWholeAndADeletionRejected) {
  InSandbox("rm c.txt && echo new > n.txt");
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.WaitFor("c.txt (deleted file)")) << review.screen();
  ASSERT_TRUE(review.WaitFor("deleted file mode 100644")) << review.screen();
  ASSERT_TRUE(review.Answer(kChangeQuestion, "n")) << review.screen();
  ASSERT_TRUE(review.WaitFor("n.txt (added file)")) << review.screen();
  ASSERT_TRUE(review.WaitFor("+new")) << review.screen();
  ASSERT_TRUE(review.Answer(kChangeQuestion, "y")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_TRUE(Contains(review.screen(), "1 approved, 1 rejected, 0 left pending.")) << review.screen();
  EXPECT_EQ(Sandboxctl({"changes", id_}), "D c.txt [rejected]\nA n.txt [approved]\n");
  Sandboxctl({"commit", id_});
  EXPECT_EQ(AsAlice("cat n.txt", project_), "new\n");
  EXPECT_EQ(access((project_ + "/c.txt").c_str(), F_OK), 0) << "a rejected deletion was committed";
}

TEST_F(ReviewTtyTest, ColourOnlyWhenStdoutIsATerminal) {
  InSandbox("echo more >> a.txt");
  auto shown_so_far = [&] { return AsAlice("cat ../review-stdout.txt", project_); };
  Conversation review(kAlice, project_, {"review", id_}, project_ + "/../review-stdout.txt");
  ASSERT_TRUE(WaitUntil([&] { return Contains(shown_so_far(), HunkQuestion(1, 1)); }, 30s)) << shown_so_far();
  review.Type("y");
  EXPECT_EQ(review.Finish(), 0) << review.screen() << shown_so_far();
  std::string shown = shown_so_far();
  EXPECT_TRUE(Contains(shown, "diff --git a/a.txt b/a.txt\n")) << shown;
  EXPECT_TRUE(Contains(shown, "\n+more\n")) << shown;
  EXPECT_FALSE(Contains(shown, "\033[")) << shown;
  EXPECT_TRUE(Contains(shown, "1 approved, 0 rejected, 0 left pending.")) << shown;
  EXPECT_EQ(Sandboxctl({"changes", id_}), "M a.txt [approved]\n");
}

TEST_F(ReviewTtyTest, WithoutATerminalItRefusesWithExitTwo) {
  InSandbox("echo more >> a.txt");
  Result r = World().Sandboxctl(kAlice, {"review", id_});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "approve") && Contains(r.err, "reject")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(Sandboxctl({"changes", id_}), "M a.txt\n");
}

TEST_F(ReviewTtyTest, ASignalEndsTheReviewAndGivesTheTerminalBack) {
  InSandbox("echo more >> a.txt && echo more >> b.txt");
  for (int signal_number : {SIGINT, SIGTERM}) {
    Conversation review(kAlice, project_, {"review", id_});
    ASSERT_TRUE(review.WaitFor(HunkQuestion(1, 1))) << review.screen();
    termios asking = review.Modes();
    EXPECT_EQ(asking.c_lflag & (ICANON | ECHO), 0u) << "keys are not read one at a time";
    if (signal_number == SIGINT) review.Type("\x03");  // Ctrl-C, through the terminal
    else kill(review.pid(), signal_number);
    EXPECT_EQ(review.Finish(), 128 + signal_number) << review.screen();
    termios after = review.Modes();
    EXPECT_EQ(after.c_lflag & (ICANON | ECHO), static_cast<tcflag_t>(ICANON | ECHO)) << "the terminal was left raw";
    EXPECT_TRUE(Contains(review.screen(), "0 approved, 0 rejected, 2 left pending.")) << review.screen();
  }
  EXPECT_EQ(Sandboxctl({"changes", id_}), "M a.txt\nM b.txt\n");
}

TEST_F(ReviewTtyTest, TryOffersTheReviewAndCommitsWhatWasApproved) {
  std::string project = World().MakeProject(kAlice);  // the fixture's sandbox holds project_
  std::string before_c = AsAlice("cat c.txt", project);
  // try's stdout is the command's and a kept sandbox's id; the review speaks on the terminal.
  Conversation attempt(kAlice, project, {"--no-ask-password", "try", "--", "sh", "-c", "echo more >> a.txt; echo new > n.txt; rm c.txt"},
                       project + "/../try-stdout.txt");
  ASSERT_TRUE(attempt.Answer("[r]eview, [c]ommit all, [d]iscard, [k]eep? ", "r\n")) << attempt.screen();
  ASSERT_TRUE(attempt.Answer(HunkQuestion(1, 1), "y")) << attempt.screen();  // a.txt
  ASSERT_TRUE(attempt.Answer(kChangeQuestion, "n")) << attempt.screen();     // c.txt deleted
  ASSERT_TRUE(attempt.Answer(kChangeQuestion, "y")) << attempt.screen();     // n.txt added
  // Only the rejected deletion is left: kept, not dropped with the sandbox.
  ASSERT_TRUE(attempt.Answer("Drop the 1 rejected change(s) with the sandbox? [y/N] ", "n\n")) << attempt.screen();
  EXPECT_EQ(attempt.Finish(), 0) << attempt.screen();
  EXPECT_TRUE(Contains(attempt.screen(), "+more")) << attempt.screen();
  EXPECT_TRUE(Contains(attempt.screen(), "2 approved, 1 rejected, 0 left pending.")) << attempt.screen();
  EXPECT_TRUE(Contains(AsAlice("cat a.txt", project), "more\n"));
  EXPECT_EQ(AsAlice("cat n.txt", project), "new\n");
  EXPECT_EQ(AsAlice("cat c.txt", project), before_c) << "the rejected deletion was committed";
  // The rejected change stays in the kept sandbox, whose id alone is on stdout.
  std::string id = Trim(AsAlice("cat ../try-stdout.txt", project));
  EXPECT_TRUE(Contains(attempt.screen(), "Kept sandbox " + id + ":")) << id << "\n" << attempt.screen();
  EXPECT_EQ(Sandboxctl({"changes", id}), "D c.txt [rejected]\n");
  Sandboxctl({"destroy", id});
}

TEST_F(ReviewTtyTest, TryWithEverythingApprovedCommitsAndDestroysTheSandbox) {
  size_t sandboxes = nlohmann::json::parse(Sandboxctl({"--json", "list"})).size();
  std::string project = World().MakeProject(kAlice);  // the fixture's sandbox holds project_
  Conversation attempt(kAlice, project, {"--no-ask-password", "try", "--", "sh", "-c", "echo new > n.txt"});
  ASSERT_TRUE(attempt.Answer("[r]eview, ", "r\n")) << attempt.screen();
  ASSERT_TRUE(attempt.Answer(kChangeQuestion, "y")) << attempt.screen();
  EXPECT_EQ(attempt.Finish(), 0) << attempt.screen();
  EXPECT_EQ(AsAlice("cat n.txt", project), "new\n");
  EXPECT_FALSE(Contains(attempt.screen(), "Kept sandbox")) << attempt.screen();
  EXPECT_EQ(nlohmann::json::parse(Sandboxctl({"--json", "list"})).size(), sandboxes) << "try left its sandbox behind";
}

}  // namespace
}  // namespace sandboxd::it
