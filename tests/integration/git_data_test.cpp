// A repository's own data is git, not files (git_data.h): what a job's `git commit` writes
// beneath .git is one line of `changes` per repository, decided and committed whole (a ref
// without its objects, or an index without its commit, is a broken repository); a live
// `git status` that only refreshes the index's stat cache does not make the sandbox's index a
// conflict, while a live `git add` does; and what git runs or obeys (hooks, config) is never
// folded away, so no program a job plants there lands unseen.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "conversation.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

constexpr const char* kCommitAs = "git -c user.name=Agent -c user.email=agent@example.org";

class GitDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    Result git = Live(std::string("git init -q -b main && echo one > a.txt && echo c > c.txt && git add a.txt c.txt && ") + kCommitAs + " commit -qm first");
    ASSERT_EQ(git.status, 0) << git.err;
    id_ = Trim(Ctl({"create", project_}).out);
    ASSERT_FALSE(id_.empty());
  }
  void TearDown() override {
    if (!id_.empty()) Ctl({"destroy", id_});
  }
  Result Ctl(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args, {.cwd = project_}); }
  /// A shell command as alice in the live project.
  Result Live(const std::string& script) { return World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = project_}); }
  /// A shell command as a job of the sandbox.
  Result Job(const std::string& script) { return Ctl({"run", id_, "sh", "-c", script}); }
  /// Two commits on main in the sandbox.
  void CommitTwiceInTheSandbox() {
    Result job = Job(std::string("echo two >> a.txt && ") + kCommitAs + " commit -qam second && echo n > new.txt && git add new.txt && " +
                     kCommitAs + " commit -qm third");
    ASSERT_EQ(job.status, 0) << job.err;
  }
  std::string project_, id_;
};

TEST_F(GitDataTest, AJobsCommitsAreOneLineAndTheFilesAreThereOnAsking) {
  const std::string before = Trim(Live("git rev-parse HEAD").out);
  CommitTwiceInTheSandbox();
  const std::string after = Trim(Job("git rev-parse HEAD").out);
  ASSERT_EQ(after.size(), 40u);
  Result changes = Ctl({"changes", id_});
  ASSERT_EQ(changes.status, 0) << changes.err;
  const std::string fold = "git: 2 commits on main (" + before.substr(0, 7) + ".." + after.substr(0, 7) + "), index (";
  EXPECT_TRUE(std::regex_match(changes.out, std::regex("M a\\.txt\nA new\\.txt\n" + std::regex_replace(fold, std::regex("[().]"), "\\$&") +
                                                       "[0-9]+ files\\)\n")))
      << changes.out;
  Result files = Ctl({"changes", "--git", id_});
  EXPECT_TRUE(Contains(files.out, "M .git/refs/heads/main\n")) << files.out;
  EXPECT_TRUE(Contains(files.out, "M .git/index\n")) << files.out;
  EXPECT_TRUE(Contains(files.out, "A .git/objects/" + after.substr(0, 2) + "/" + after.substr(2) + "\n")) << files.out;
  // The diff shows the files (git apply refuses every path inside .git) and says what it left out.
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_TRUE(Contains(diff.out, "+++ b/new.txt")) << diff.out;
  EXPECT_FALSE(Contains(diff.out, ".git/")) << diff.out;
  EXPECT_TRUE(Contains(diff.err, "of git's own data in .git not shown (--git shows them")) << diff.err;
  EXPECT_TRUE(Contains(Ctl({"diff", "--git", id_}).out, "diff --git a/.git/refs/heads/main b/.git/refs/heads/main"));
  EXPECT_TRUE(Contains(Ctl({"diff", id_, ".git/refs/heads/main"}).out, "+" + after)) << "named by its own path, it is shown";
  // Scripts get every change as it is.
  EXPECT_TRUE(Contains(Ctl({"--json", "changes", id_}).out, "\".git/refs/heads/main\"")) ;
}

TEST_F(GitDataTest, ARepositorysDataIsDecidedAndCommittedWholeOrNotAtAll) {
  CommitTwiceInTheSandbox();
  // A ref without its objects would be a broken repository: a part is refused, naming the whole.
  Result part = Ctl({"approve", id_, ".git/refs/heads/main"});
  EXPECT_EQ(part.status, 1);
  EXPECT_TRUE(Contains(part.err, "decided whole")) << part.err;
  EXPECT_TRUE(Contains(part.err, "name .git instead")) << part.err;
  EXPECT_TRUE(Contains(Ctl({"approve", id_, ".git/objects"}).err, "decided whole"));
  EXPECT_FALSE(Contains(Ctl({"changes", id_}).out, "[approved]")) << "nothing was decided";
  Result commit_part = Ctl({"commit", "--all", id_, ".git/refs"});
  EXPECT_EQ(commit_part.status, 1);
  EXPECT_TRUE(Contains(commit_part.err, "a git commit lands with its objects, refs and index or not at all")) << commit_part.err;
  EXPECT_EQ(Trim(Live("git rev-list --count HEAD").out), "1") << "nothing went live";
  // The files alone may go (the repository does not change), and then the repository whole.
  ASSERT_EQ(Ctl({"approve", id_, "a.txt", "new.txt"}).status, 0);
  EXPECT_TRUE(Contains(Ctl({"changes", id_}).out, "files)\n")) << "the data stays pending";
  ASSERT_EQ(Ctl({"approve", id_, ".git"}).status, 0);
  EXPECT_TRUE(Contains(Ctl({"changes", id_}).out, "files) [approved]\n")) << Ctl({"changes", id_}).out;
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(Trim(Live("git rev-list --count HEAD").out), "3");
  EXPECT_EQ(Live("git status --porcelain --untracked-files=no").out, "") << "the index came with its commits";
  EXPECT_EQ(Live("git fsck --no-dangling 2>&1").status, 0);
}

// A live `git status` rewrites .git/index with new stat data and stages nothing: the sandbox's
// index is no conflict for it (seen failing without staged sights: "changed in the live tree").
// A live `git add` stages something the sandbox's index would take back: that is a conflict.
TEST_F(GitDataTest, ALiveGitStatusIsNoConflictButALiveGitAddIs) {
  CommitTwiceInTheSandbox();
  ASSERT_EQ(Ctl({"approve", "--all", id_}).status, 0);
  struct stat before, after;
  ASSERT_EQ(stat((project_ + "/.git/index").c_str(), &before), 0);
  ASSERT_EQ(Live("sleep 0.05; touch c.txt && git status --porcelain >/dev/null").status, 0);
  ASSERT_EQ(stat((project_ + "/.git/index").c_str(), &after), 0);
  ASSERT_NE(before.st_ino, after.st_ino) << "git status rewrote the live index";
  // Neither a conflict nor a lapsed decision (seen failing without staged sights: "changed in
  // the live tree"; and with the live index's stamp in the decision's fingerprint: "partly
  // decided").
  Result changes = Ctl({"changes", id_});
  EXPECT_FALSE(Contains(changes.out, "conflict")) << changes.out;
  EXPECT_TRUE(Contains(changes.out, "files) [approved]\n")) << changes.out;
  // The owner stages something in the live tree (a deletion: no object is written, which could
  // land in a directory the sandbox made): the sandbox's index would take it back.
  ASSERT_EQ(Live("git rm -q --cached c.txt").status, 0);
  Result refused = Ctl({"commit", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_TRUE(Contains(refused.err, ".git/index")) << refused.err;
  EXPECT_TRUE(Contains(Ctl({"changes", id_}).out, "[conflict: .git/index: changed in the live tree]")) << Ctl({"changes", id_}).out;
  EXPECT_EQ(Trim(Live("git rev-list --count HEAD").out), "1");
  // Unstaged again (what it stages is back to what the sandbox saw): no conflict, and the
  // commit lands.
  ASSERT_EQ(Live("git reset -q -- c.txt && git status --porcelain >/dev/null").status, 0);
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_EQ(Trim(Live("git rev-list --count HEAD").out), "3");
  EXPECT_EQ(Live("git status --porcelain --untracked-files=no").out, "");
}

// The owner's prompt runs git status as soon as a job's `run` returns, before the settling
// of a big job has recorded what the job saw: the index's sight is taken as the job ends (seen
// failing when it waited for the settling: "changed in the live tree after the sandbox read it").
TEST_F(GitDataTest, AGitStatusRightAfterABigJobIsNoConflict) {
  Result job = Job(std::string("mkdir many && cd many && seq 1 20000 | xargs touch && cd .. && echo two >> a.txt && ") + kCommitAs +
                   " commit -qam second");
  ASSERT_EQ(job.status, 0) << job.err;
  ASSERT_EQ(Live("touch c.txt && git status --porcelain >/dev/null").status, 0);
  Result changes = Ctl({"changes", id_});
  EXPECT_TRUE(Contains(changes.out, "git: 1 commit on main (")) << changes.out.substr(changes.out.size() > 400 ? changes.out.size() - 400 : 0);
  EXPECT_FALSE(Contains(changes.out, "conflict")) << changes.out.substr(changes.out.size() > 400 ? changes.out.size() - 400 : 0);
}

// An agent sees the same through `sandboxctl mcp`: its changes tool folds a repository's data
// into the line (and lists every change in its structured answer); a repository a job made
// anew is one too.
TEST_F(GitDataTest, TheMcpChangesToolFoldsToo) {
  CommitTwiceInTheSandbox();
  ASSERT_EQ(Job(std::string("mkdir lib && cd lib && git init -q -b main && echo l > l && git add l && ") + kCommitAs + " commit -qm l").status, 0);
  auto call = [](int id, const std::string& tool) {
    return nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", nlohmann::json::object()}}}}
               .dump() + "\n";
  };
  Result mcp = World().Sandboxctl(kAlice, {"mcp"}, {.input = call(1, "sandbox_open") + call(2, "changes"), .cwd = project_,
                                                     .timeout = std::chrono::seconds(120)});
  ASSERT_EQ(mcp.status, 0) << mcp.err;
  nlohmann::json answer;
  std::istringstream lines(mcp.out);
  for (std::string line; std::getline(lines, line);)
    if (auto one = nlohmann::json::parse(line, nullptr, false); !one.is_discarded() && one["id"] == 2) answer = one;
  ASSERT_TRUE(answer.is_object()) << mcp.out;
  const std::string text = answer["result"]["content"][0]["text"];
  EXPECT_TRUE(Contains(text, "\ngit: 2 commits on main (")) << text;
  EXPECT_TRUE(Contains(text, "git (lib/): new repository, 1 commit on main (")) << text;
  EXPECT_FALSE(Contains(text, "/objects/")) << text;
  EXPECT_FALSE(Contains(text, "refs/heads")) << text;
  EXPECT_TRUE(Contains(text, "A lib/.git/config\n")) << "what git obeys is listed: " << text;
  EXPECT_EQ(answer["result"]["structuredContent"]["git"].size(), 2u) << answer.dump();
  EXPECT_GT(answer["result"]["structuredContent"]["total"].get<size_t>(), 10u);
}

// review asks about a repository's data once, after the files, and decides all of it.
TEST_F(GitDataTest, ReviewAsksAboutTheRepositoryOnce) {
  CommitTwiceInTheSandbox();
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.Answer("Approve this hunk [y,n,q,a,d,j,J,k,K,?]? ", "n")) << review.screen();
  ASSERT_TRUE(review.Answer("Approve this change [y,n,q,j,?]? ", "n")) << review.screen();
  ASSERT_TRUE(review.WaitFor("git: 2 commits on main (")) << review.screen();
  ASSERT_TRUE(review.Answer("Approve this repository's data [y,n,q,j,?]? ", "y")) << review.screen();
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), ".git/objects")) << review.screen();
  Result changes = Ctl({"changes", id_});
  EXPECT_TRUE(Contains(changes.out, "M a.txt [rejected]\nA new.txt [rejected]\ngit: 2 commits on main (")) << changes.out;
  EXPECT_TRUE(Contains(changes.out, "files) [approved]\n")) << changes.out;
}

// What git runs or obeys is listed as the files it is, never folded: a hook a job plants runs
// on the owner's next git command, and core.fsmonitor in config runs at every git status.
TEST_F(GitDataTest, HooksAndConfigAreNeverFolded) {
  Result job = Job("printf '#!/bin/sh\\necho owned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && "
                   "git config core.fsmonitor 'echo owned'");
  ASSERT_EQ(job.status, 0) << job.err;
  Result changes = Ctl({"changes", id_});
  EXPECT_TRUE(Contains(changes.out, "A .git/hooks/pre-commit\n")) << changes.out;
  EXPECT_TRUE(Contains(changes.out, "M .git/config\n")) << changes.out;
  EXPECT_FALSE(Contains(changes.out, "git: ")) << "nothing else of the repository changed: " << changes.out;
}

}  // namespace
}  // namespace sandboxd::it
