// --include / --exclude on changes, diff, approve, reject and commit, with real parts: a job
// leaves logs, a node_modules and a source file; the patterns pick among them, and what they
// leave out stays in the sandbox untouched.

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}


/// The project already holds sub/, so sub/b.log is the only change there.
constexpr const char* kJob =
    "echo a > a.log && echo b > sub/b.log && mkdir -p node_modules/x src && echo y > node_modules/x/y.js"
    " && echo 'int main(void) { return 0; }' > src/main.c";
constexpr const char* kAllChanges =
    "A a.log\nA node_modules\nA node_modules/x\nA node_modules/x/y.js\nA src\nA src/main.c\nA sub/b.log\n";

using PatternsTest = AliceSandboxTest;

TEST_F(PatternsTest, ChangesListsOnlyThePassingPaths) {
  Job(kJob);
  ASSERT_EQ(Changes(), kAllChanges);
  Result filtered = Ctl({"changes", id_, "--exclude", "*.log", "--exclude", "node_modules/**"});
  ASSERT_EQ(filtered.status, 0) << filtered.err;
  EXPECT_EQ(filtered.out, "A src\nA src/main.c\n");

  Result json = Ctl({"--json", "changes", id_, "--include", "*.log"});
  ASSERT_EQ(json.status, 0) << json.err;
  auto listed = nlohmann::json::parse(json.out);
  ASSERT_EQ(listed.size(), 2u) << json.out;
  EXPECT_EQ(listed[0]["path"], "a.log");
  EXPECT_EQ(listed[1]["path"], "sub/b.log");
}

TEST_F(PatternsTest, CommitAllLeavesTheExcludedChangesInTheSandbox) {
  Job(kJob);
  Result commit = Ctl({"commit", id_, "--all", "--exclude", "node_modules/**"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(Exists(project_ + "/a.log"));
  EXPECT_TRUE(Exists(project_ + "/sub/b.log"));
  EXPECT_TRUE(Exists(project_ + "/src/main.c"));
  EXPECT_FALSE(Exists(project_ + "/node_modules")) << "node_modules was excluded";
  EXPECT_EQ(Changes(), "A node_modules\nA node_modules/x\nA node_modules/x/y.js\n");
  EXPECT_EQ(Ctl({"run", id_, "--", "cat", "node_modules/x/y.js"}).out, "y\n") << "the job's view is unchanged";
}

TEST_F(PatternsTest, ApproveAllWithAnIncludeApprovesOnlyWhatMatches) {
  Job(kJob);
  Result approve = Ctl({"approve", id_, "--all", "--include", "*.c"});
  ASSERT_EQ(approve.status, 0) << approve.err;
  EXPECT_NE(approve.err.find("Approved 1 "), std::string::npos) << approve.err;
  EXPECT_EQ(Changes(), "A a.log\nA node_modules\nA node_modules/x\nA node_modules/x/y.js\nA src\nA src/main.c [approved]\nA sub/b.log\n");

  // A commit of the approved changes takes src/main.c (and the new src/ it needs) alone.
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(Exists(project_ + "/src/main.c"));
  EXPECT_FALSE(Exists(project_ + "/a.log"));
  EXPECT_FALSE(Exists(project_ + "/node_modules"));
}

TEST_F(PatternsTest, RejectWithAnExcludeRejectsTheRest) {
  Job(kJob);
  Result reject = Ctl({"reject", id_, "--all", "--exclude", "src/**", "--exclude", "node_modules"});
  ASSERT_EQ(reject.status, 0) << reject.err;
  EXPECT_EQ(Changes(), "A a.log [rejected]\nA node_modules\nA node_modules/x\nA node_modules/x/y.js\nA src\nA src/main.c\nA sub/b.log [rejected]\n");
}

TEST_F(PatternsTest, DiffWithAnIncludeShowsOnlyWhatMatches) {
  Job(kJob);
  Result all = Ctl({"diff", id_});
  ASSERT_EQ(all.status, 0) << all.err;
  ASSERT_EQ(CountOf(all.out, "diff --git "), 4u) << all.out;

  Result diff = Ctl({"diff", id_, "--include", "src/**"});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_EQ(CountOf(diff.out, "diff --git "), 1u) << diff.out;
  EXPECT_NE(diff.out.find("diff --git a/src/main.c b/src/main.c\n"), std::string::npos) << diff.out;

  // Among selected changes: the selectors may come before or after the patterns.
  Result among = Ctl({"diff", id_, "--exclude", "*.js", "node_modules", "sub"});
  ASSERT_EQ(among.status, 0) << among.err;
  EXPECT_EQ(CountOf(among.out, "diff --git "), 1u) << among.out;
  EXPECT_NE(among.out.find("diff --git a/sub/b.log b/sub/b.log\n"), std::string::npos) << among.out;

  Result none = Ctl({"diff", id_, "--include", "*.rs"});
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out, "") << "no passing change is no diff, not every diff";
}

TEST_F(PatternsTest, APatternThatMatchesNothingDecidesNothing) {
  Job(kJob);
  for (const char* verb : {"approve", "reject"}) {
    Result refused = Ctl({verb, id_, "--all", "--include", "*.rs"});
    EXPECT_EQ(refused.status, 1) << verb;
    EXPECT_NE(refused.err.find("--include '*.rs'"), std::string::npos) << refused.err;
    EXPECT_EQ(CountOf(refused.err, "\n"), 1u) << "one line: " << refused.err;
  }
  Result named = Ctl({"approve", id_, "src", "--exclude", "*.c", "--exclude", "src"});
  EXPECT_EQ(named.status, 1) << named.err;
  EXPECT_EQ(Changes(), kAllChanges) << "nothing was decided";
}

TEST_F(PatternsTest, SelectorsAndPatternsTakeWhatBothName) {
  Job(kJob);
  Result approve = Ctl({"approve", id_, "node_modules", "src", "--include", "*.js"});
  ASSERT_EQ(approve.status, 0) << approve.err;
  EXPECT_EQ(Changes(), "A a.log\nA node_modules\nA node_modules/x\nA node_modules/x/y.js [approved]\nA src\nA src/main.c\nA sub/b.log\n");
  Result unknown = Ctl({"approve", id_, "nope", "--include", "*.js"});
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.err.find("nope"), std::string::npos) << "a selector naming nothing is still refused: " << unknown.err;
}

TEST_F(PatternsTest, ANewDirectoryHoldingAnExcludedFileIsNotCommittedWhole) {
  // "fresh" passes --exclude '*.log', but committing it by name would take fresh/drop.log too.
  Job("mkdir fresh && echo keep > fresh/keep.c && echo drop > fresh/drop.log");
  ASSERT_EQ(Changes(), "A fresh\nA fresh/drop.log\nA fresh/keep.c\n");
  Result commit = Ctl({"commit", id_, "--all", "--exclude", "*.log"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(Exists(project_ + "/fresh/keep.c"));
  EXPECT_FALSE(Exists(project_ + "/fresh/drop.log"));
  EXPECT_EQ(Changes(), "A fresh/drop.log\n");
}

TEST_F(PatternsTest, CommitWithNothingPassingCommitsNothingAndSucceeds) {
  Job(kJob);
  auto live = Snapshot(project_);
  Result commit = Ctl({"commit", id_, "--all", "--include", "*.rs"});
  EXPECT_EQ(commit.status, 0) << commit.err;
  EXPECT_NE(commit.err.find("Nothing to commit"), std::string::npos) << commit.err;
  EXPECT_EQ(Snapshot(project_), live);
  // Without --all only approved changes count: none is.
  Result approved_only = Ctl({"commit", id_, "--include", "*.c"});
  EXPECT_EQ(approved_only.status, 0) << approved_only.err;
  EXPECT_NE(approved_only.err.find("Nothing to commit"), std::string::npos) << approved_only.err;
  EXPECT_EQ(Snapshot(project_), live);
  EXPECT_EQ(Changes(), kAllChanges);
}

}  // namespace
}  // namespace sandboxd::it
