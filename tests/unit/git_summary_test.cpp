// What the text helper reads of a repository as a sandbox left it (git_summary.h) and what an
// index stages (staged_digest.h), on real repositories made by git: the live tree one, the
// sandbox's layer a copy of it where git went on (every entry of an upper shadows the live one,
// so a whole copy is an upper that changed everything).

#include "helpers/git_summary.h"
#include "helpers/staged_digest.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "shell_output.h"
#include "temp_dir.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

using testing::ScopedTempDir;
using testing::ShellOutput;

const std::string kGit = "git -c user.name=T -c user.email=t@example.org -c init.defaultBranch=main ";

class GitSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(Sh("mkdir live && cd live && " + kGit + "init -q && echo a > a && " + kGit + "add a && " + kGit + "commit -qm one"), 0);
    ASSERT_EQ(Sh("cp -a live upper"), 0);
  }
  int Sh(const std::string& script) { return std::system(("cd " + dir_.path() + " && (" + script + ") >/dev/null 2>&1").c_str()); }
  std::string Head(const std::string& side) { return ShellOutput("git -C " + dir_.path() + "/" + side + " rev-parse HEAD").substr(0, 40); }
  UniqueFd Open(const std::string& side) { return UniqueFd(open((dir_ / side).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)); }
  GitSummary Summary() { return SummarizeGit(Open("live").get(), Open("upper").get(), ".git"); }
  ScopedTempDir dir_;
};

TEST_F(GitSummaryTest, CommitsOnTheBranchAreCountedFromTheLiveOne) {
  ASSERT_EQ(Sh("cd upper && echo b >> a && " + kGit + "commit -qam two && echo c >> a && " + kGit + "commit -qam three"), 0);
  GitSummary summary = Summary();
  EXPECT_EQ(summary.branch, "main");
  EXPECT_EQ(summary.was_branch, "main");
  EXPECT_EQ(summary.from, Head("live"));
  EXPECT_EQ(summary.to, Head("upper"));
  EXPECT_FALSE(summary.new_branch);
  EXPECT_EQ(summary.ahead, 2);
  EXPECT_EQ(summary.behind, 0);
  EXPECT_EQ(summary.index, "changed");
}

TEST_F(GitSummaryTest, ANewBranchARewriteAndPackedObjects) {
  ASSERT_EQ(Sh("cd upper && " + kGit + "checkout -qb feature && echo b >> a && " + kGit + "commit -qam two && " + kGit + "gc -q"), 0);
  GitSummary summary = Summary();
  EXPECT_EQ(summary.branch, "feature");
  EXPECT_TRUE(summary.new_branch);
  EXPECT_EQ(summary.from, Head("live"));
  EXPECT_EQ(summary.ahead, 1) << "read from the sandbox's pack";
  ASSERT_EQ(Sh("cd upper && " + kGit + "checkout -q main && " + kGit + "commit -q --amend -m again"), 0);
  summary = Summary();
  EXPECT_EQ(summary.branch, "main");
  EXPECT_EQ(summary.ahead, 1);
  EXPECT_EQ(summary.behind, 1);
}

TEST_F(GitSummaryTest, AnIndexOnlyRefreshedStagesTheSame) {
  const StagedIndex before = StagedDigest(Open("live").get(), ".git/index");
  ASSERT_FALSE(before.digest.empty());
  ASSERT_EQ(Sh("cd live && sleep 0.05 && touch a && git status --porcelain"), 0);
  const StagedIndex refreshed = StagedDigest(Open("live").get(), ".git/index");
  EXPECT_NE(refreshed.ino, before.ino) << "git status rewrote it";
  EXPECT_EQ(refreshed.digest, before.digest);
  ASSERT_EQ(Sh("cd live && echo n > n && git add n"), 0);
  EXPECT_NE(StagedDigest(Open("live").get(), ".git/index").digest, before.digest);
  // Not an index, a symlink, nothing there: no digest, which matches nothing.
  ASSERT_EQ(Sh("cd live && ln -s index .git/link && echo x > .git/junk"), 0);
  EXPECT_EQ(StagedDigest(Open("live").get(), ".git/link").digest, "");
  EXPECT_EQ(StagedDigest(Open("live").get(), ".git/junk").digest, "");
  EXPECT_EQ(StagedDigest(Open("live").get(), ".git/none").digest, "");
}

}  // namespace
}  // namespace sandboxd
