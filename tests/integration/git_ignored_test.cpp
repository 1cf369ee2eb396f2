// Review noise: where a root lies in a git work tree, what git ignores (build output, logs) is
// folded into one counted line by `changes` and left out of `diff` unless --ignored; --json
// marks it; and a commit that takes such paths says how many, so nothing reaches the live tree
// unseen. A tracked file stays visible whatever the patterns say, as in git status.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "conversation.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

class GitIgnoredTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    Result git = World().RunAs(kAlice, {"sh", "-c",
                                        "git init -q && printf 'build/\\n*.log\\n' > .gitignore && echo old > tracked.log && "
                                        "git add .gitignore && git add -f tracked.log"},
                               {.cwd = project_});
    ASSERT_EQ(git.status, 0) << git.err;
    id_ = Trim(Ctl({"create", project_}).out);
    ASSERT_FALSE(id_.empty());
    Result job = Ctl({"run", id_, "sh", "-c", "mkdir build && echo o > build/out.o && echo l > app.log && echo s > src.c && echo new > tracked.log"});
    ASSERT_EQ(job.status, 0) << job.err;
  }
  void TearDown() override {
    if (!id_.empty()) Ctl({"destroy", id_});
  }
  Result Ctl(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args, {.cwd = project_}); }
  std::string project_, id_;
};

TEST_F(GitIgnoredTest, ChangesFoldWhatGitIgnoresIntoOneCountedLine) {
  Result folded = Ctl({"changes", id_});
  ASSERT_EQ(folded.status, 0) << folded.err;
  EXPECT_EQ(folded.out, "A src.c\nM tracked.log\n! 3 paths ignored by git (--ignored lists them)\n");
  Result all = Ctl({"changes", "--ignored", id_});
  EXPECT_EQ(all.out, "A app.log [ignored]\nA build [ignored]\nA build/out.o [ignored]\nA src.c\nM tracked.log\n");
  // Scripts get every change, the ignored ones marked.
  auto listed = nlohmann::json::parse(Ctl({"--json", "changes", id_}).out);
  ASSERT_EQ(listed.size(), 5u) << listed.dump();
  for (const auto& change : listed)
    EXPECT_EQ(change.value("ignored", false), change["path"] != "src.c" && change["path"] != "tracked.log") << change.dump();
}

TEST_F(GitIgnoredTest, DiffLeavesThemOutAndSaysSo) {
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_TRUE(Contains(diff.out, "+++ b/src.c")) << diff.out;
  EXPECT_TRUE(Contains(diff.out, "+++ b/tracked.log")) << diff.out;
  EXPECT_FALSE(Contains(diff.out, "out.o")) << diff.out;
  EXPECT_FALSE(Contains(diff.out, "app.log")) << diff.out;
  EXPECT_TRUE(Contains(diff.err, "3 paths git ignores not shown (--ignored shows them)")) << diff.err;
  Result all = Ctl({"diff", "--ignored", id_});
  EXPECT_TRUE(Contains(all.out, "+++ b/app.log")) << all.out;
  EXPECT_TRUE(Contains(all.out, "+++ b/build/out.o")) << all.out;
  // Asked for one path git does not ignore: nothing asked for was left out, and none is said to be.
  Result one = Ctl({"diff", id_, "src.c"});
  EXPECT_TRUE(Contains(one.out, "+++ b/src.c")) << one.out;
  EXPECT_FALSE(Contains(one.err, "git ignores not shown")) << one.err;
  // Asked for a directory git ignores: it and what it holds are said to be left out.
  Result build = Ctl({"diff", id_, "build"});
  EXPECT_TRUE(Contains(build.err, "2 paths git ignores not shown")) << build.err;
}

// review asks about what git does not ignore, and says what it leaves as it is.
TEST_F(GitIgnoredTest, ReviewGoesThroughWhatGitDoesNotIgnore) {
  Conversation review(kAlice, project_, {"review", id_});
  ASSERT_TRUE(review.WaitFor("3 paths git ignores left as they are (review --ignored goes through them).")) << review.screen();
  ASSERT_TRUE(review.Answer("Approve this change [y,n,q,j,?]? ", "y")) << review.screen();
  ASSERT_TRUE(review.WaitFor("tracked.log")) << review.screen();
  review.Type("q");
  EXPECT_EQ(review.Finish(), 0) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), "app.log")) << review.screen();
  EXPECT_FALSE(Contains(review.screen(), "out.o")) << review.screen();
  EXPECT_TRUE(Contains(Ctl({"changes", id_}).out, "A src.c [approved]\n"));
}

// Folded is not hidden from the commit: it takes them with the rest, and says how many.
TEST_F(GitIgnoredTest, ACommitThatTakesIgnoredPathsSaysHowMany) {
  Result commit = Ctl({"commit", "--all", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(Contains(commit.err, "Committed 5 changes (3 of them git ignores")) << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/build/out.o"), "o\n");
}

// With patterns the count is of what the patterns leave: one listing of the change set gives
// both.
TEST_F(GitIgnoredTest, ACommitWithPatternsCountsTheIgnoredPathsItTakes) {
  Result logs = Ctl({"commit", "--all", "--include", "*.log", id_});
  ASSERT_EQ(logs.status, 0) << logs.err;
  EXPECT_TRUE(Contains(logs.err, "Committed 2 changes (1 of them git ignores")) << logs.err;
  EXPECT_EQ(ReadWhole(project_ + "/app.log"), "l\n");
  Result source = Ctl({"commit", "--all", "--include", "*.c", id_});
  ASSERT_EQ(source.status, 0) << source.err;
  EXPECT_TRUE(Contains(source.err, "Committed 1 change.")) << source.err;
  EXPECT_EQ(Ctl({"changes", "--ignored", id_}).out, "A build [ignored]\nA build/out.o [ignored]\n");
}

// With several roots, each is asked of its own work tree, its paths read past their "N/"
// prefix: a second root's ignored file is folded, the first root (no work tree) folds nothing.
// A rename is one change: folded only when git ignores both of its paths. An ignored file
// moved to a name git does not ignore went live unshown (found by the display-equals-commit
// property: approved by its old name, `diff` of it showed nothing, and commit landed the new one).
TEST_F(GitIgnoredTest, ARenameOutOfAnIgnoredPathIsShown) {
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "printf 'kept\\n%.0s' $(seq 1 50) > kept.log"}, {.cwd = project_}).status, 0);
  ASSERT_EQ(Ctl({"destroy", id_}).status, 0);
  id_ = Trim(Ctl({"create", project_}).out);
  ASSERT_EQ(Ctl({"run", id_, "mv", "kept.log", "kept.txt"}).status, 0);
  Result listed = Ctl({"changes", id_});
  EXPECT_TRUE(Contains(listed.out, "kept.txt")) << listed.out;
  ASSERT_EQ(Ctl({"approve", id_, "kept.log"}).status, 0);
  Result shown = Ctl({"diff", id_, "kept.log"});
  EXPECT_TRUE(Contains(shown.out, "rename to kept.txt")) << shown.out << shown.err;
}

TEST(GitIgnoredRootsTest, EachRootIsAskedOfItsOwnWorkTree) {
  SANDBOXD_REQUIRE_WORLD();
  std::string plain = World().MakeProject(kAlice);
  std::string repo = World().MakeProject(kAlice);
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "git init -q && echo '*.log' > .gitignore"}, {.cwd = repo}).status, 0);
  std::string id = Trim(World().Sandboxctl(kAlice, {"create", plain, repo}).out);
  ASSERT_FALSE(id.empty());
  Result job = World().Sandboxctl(kAlice, {"run", id, "sh", "-c", "echo a > " + plain + "/a.log && echo b > " + repo + "/b.log"});
  ASSERT_EQ(job.status, 0) << job.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", id}).out, "A 0/a.log\n! 1 path ignored by git (--ignored lists them)\n");
  World().Sandboxctl(kAlice, {"destroy", id});
}

/// A sandbox over a work tree whose .gitignore has "/dist/", and whose job writes the files in
/// `script` and dist/real.js, which git does ignore.
class GitIgnoredNamesTest : public ::testing::Test {
 protected:
  void Start(const std::string& script) {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "git init -q && echo /dist/ > .gitignore"}, {.cwd = project_}).status, 0);
    id_ = Trim(Ctl({"create", project_}).out);
    ASSERT_FALSE(id_.empty());
    Result job = Ctl({"run", id_, "sh", "-c", "mkdir dist && echo r > dist/real.js && " + script});
    ASSERT_EQ(job.status, 0) << job.err;
  }
  void TearDown() override {
    if (!id_.empty()) Ctl({"destroy", id_});
  }
  Result Ctl(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args, {.cwd = project_}); }
  /// What `changes --json` marks ignored.
  std::set<std::string> MarkedIgnored() {
    std::set<std::string> marked;
    for (const auto& change : nlohmann::json::parse(Ctl({"--json", "changes", id_}).out))
      if (change.value("ignored", false)) marked.insert(change["path"].get<std::string>());
    return marked;
  }
  std::string project_, id_;
};

// Names are data: git reads a path that begins with ':' as pathspec magic (":/" from the top,
// ":(top)"), so ":/dist/evil.js" was asked as "dist/evil.js", counted as ignored and left out of
// changes, diff and review, while commit --all took it. Glob characters are no pattern either.
TEST_F(GitIgnoredNamesTest, NamesThatReadAsPathspecMagicAreNotFolded) {
  Start("mkdir -p :/dist ':(top)dist' 'd?st' && echo evil > :/dist/evil.js && echo x > ':(top)dist/x' && "
        "echo d > 'd*' && echo s > '*' && echo y > 'd?st/y'");
  EXPECT_EQ(MarkedIgnored(), (std::set<std::string>{"dist", "dist/real.js"}));
  Result changes = Ctl({"changes", id_});
  ASSERT_EQ(changes.status, 0) << changes.err;
  for (const char* name : {":", ":/dist", ":/dist/evil.js", ":(top)dist", ":(top)dist/x", "*", "d*", "d?st", "d?st/y"})
    EXPECT_TRUE(Contains(changes.out, std::string("A ") + name + "\n")) << name << " folded:\n" << changes.out;
  EXPECT_TRUE(Contains(changes.out, "! 2 paths ignored by git")) << changes.out;
  Result diff = Ctl({"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  EXPECT_TRUE(Contains(diff.out, "+++ b/:/dist/evil.js\n@@ -0,0 +1 @@\n+evil\n")) << diff.out;
  EXPECT_TRUE(Contains(diff.out, "+++ b/:(top)dist/x\n")) << diff.out;
  EXPECT_FALSE(Contains(diff.out, "real.js")) << diff.out;
  EXPECT_TRUE(Contains(diff.err, "2 paths git ignores not shown")) << diff.err;
}

// ":!x" (exclude) is magic check-ignore refuses outright: it answered nothing for the whole root,
// so one such name turned folding off. Asked as a name, it is just not ignored, and the rest fold.
TEST_F(GitIgnoredNamesTest, ANameGitRefusesAsAPathspecFoldsAsAnyOther) {
  Start("echo a > ':!x' && echo b > ':^x'");
  EXPECT_EQ(MarkedIgnored(), (std::set<std::string>{"dist", "dist/real.js"}));
  const std::string folded = "A :!x\nA :^x\n! 2 paths ignored by git (--ignored lists them)\n";
  EXPECT_EQ(Ctl({"changes", id_}).out, folded);
  // Nor does a user's GIT_LITERAL_PATHSPECS=1, which check-ignore refuses for every path.
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", id_}, {.cwd = project_, .extra_env = {"GIT_LITERAL_PATHSPECS=1"}}).out, folded);
}

// git is asked only where it may answer: no process for a root with no ".git" above it, nor for
// an empty change set; a root in a work tree with changes is asked (rev-parse, check-ignore).
// Seen through a `git` first on PATH that notes each call.
TEST(GitIgnoredAskingTest, GitStartsOnlyWhereAWorkTreeMayBeAndThereAreChanges) {
  SANDBOXD_REQUIRE_WORLD();
  std::string tools = World().MakeProject(kAlice), plain = World().MakeProject(kAlice), repo = World().MakeProject(kAlice);
  const std::string calls = tools + "/calls";
  ASSERT_EQ(World().RunAs(kAlice, {"mkdir", tools + "/bin"}).status, 0);
  {
    std::ofstream script(tools + "/bin/git");
    script << "#!/bin/sh\necho \"$*\" >> " << calls << "\nexec /usr/bin/git \"$@\"\n";
  }
  ASSERT_EQ(chmod((tools + "/bin/git").c_str(), 0755), 0);
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "git init -q && echo '*.log' > .gitignore"}, {.cwd = repo}).status, 0);
  const RunOptions noted{.extra_env = {"PATH=" + tools + "/bin:/usr/bin:/bin"}};
  auto asked = [&] { return ReadWhole(calls); };

  std::string plain_id = Trim(World().Sandboxctl(kAlice, {"create", plain}).out);
  ASSERT_FALSE(plain_id.empty());
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", plain_id, "sh", "-c", "echo x > x.log"}).status, 0);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", plain_id}, noted).out, "A x.log\n");
  EXPECT_EQ(asked(), "") << "no .git above the root, yet git was started";

  std::string repo_id = Trim(World().Sandboxctl(kAlice, {"create", repo}).out);
  ASSERT_FALSE(repo_id.empty());
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", repo_id}, noted).out, "");
  EXPECT_EQ(asked(), "") << "an empty change set, yet git was started";
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", repo_id, "sh", "-c", "echo x > x.log && echo c > c.c"}).status, 0);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", repo_id}, noted).out, "A c.c\n! 1 path ignored by git (--ignored lists them)\n");
  EXPECT_TRUE(Contains(asked(), "rev-parse --is-inside-work-tree")) << asked();
  EXPECT_TRUE(Contains(asked(), "check-ignore --stdin -z")) << asked();
  World().Sandboxctl(kAlice, {"destroy", plain_id});
  World().Sandboxctl(kAlice, {"destroy", repo_id});
}


// A type change is one change with two sides, folded only when git ignores both, each asked as
// what it is: "docs/" in .gitignore ignores the live directory docs, never the symlink a job put
// in its place, yet git, asked in the live tree, looked at the directory there, and the symlink
// went live unshown (found by the display-equals-commit property: approved, `diff` of it showed
// nothing, commit landed it). Nor is a file git shows folded away as a directory takes its place.
TEST(GitIgnoredTypeChangeTest, ATypeChangeIsFoldedOnlyWhenGitIgnoresBothOfItsSides) {
  SANDBOXD_REQUIRE_WORLD();
  std::string repo = World().MakeProject(kAlice);
  ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "git init -q && printf 'docs/\\nbuild/\\nlogs/\\n' > .gitignore && mkdir docs logs && "
                                   "echo r > docs/README && echo l > logs/1 && echo b > build"}, {.cwd = repo}).status, 0);
  std::string id = Trim(World().Sandboxctl(kAlice, {"create", repo}).out);
  ASSERT_FALSE(id.empty());
  Result job = World().Sandboxctl(kAlice, {"run", id, "sh", "-c", "rm -rf docs && ln -s docs docs && rm build && mkdir build && "
                                           "echo o > build/out.o && rm -rf logs && mkdir logs && echo 2 > logs/2"});
  ASSERT_EQ(job.status, 0) << job.err;
  auto ctl = [&](const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args, {.cwd = repo}); };
  // docs and build are shown; what the new build holds, and logs/, a directory on both sides, folded.
  EXPECT_EQ(ctl({"changes", id}).out, "T build\nT docs\n! 3 paths ignored by git (--ignored lists them)\n");
  Result diff = ctl({"diff", id});
  EXPECT_TRUE(Contains(diff.out, "diff --git a/docs b/docs\nnew file mode 120000\n")) << diff.out;
  EXPECT_TRUE(Contains(diff.out, "diff --git a/build b/build\ndeleted file mode 100644\n")) << diff.out;
  // A directory is named with all it holds: build's deletion cannot be shown without out.o.
  EXPECT_TRUE(Contains(diff.out, "+++ b/build/out.o\n")) << diff.out;
  EXPECT_FALSE(Contains(diff.out, "logs/")) << diff.out;
  EXPECT_TRUE(Contains(diff.err, "2 paths git ignores not shown")) << diff.err;
  // What the diff shows of the approved, applied by git to a copy of the live tree, is what the
  // commit lands (but for what git ignores).
  ASSERT_EQ(ctl({"approve", id, "docs"}).status, 0);
  const std::string patch = ctl({"diff", "--binary", id, "docs"}).out;
  std::string copy = World().MakeProject(kAlice);
  ASSERT_EQ(World().RunAs(kAlice, {"cp", "-a", repo + "/.", copy}).status, 0);
  Result applied = World().RunAs(kAlice, {"git", "apply", "--binary", "-"}, {.input = patch, .cwd = copy});
  EXPECT_EQ(applied.status, 0) << applied.err << patch;
  ASSERT_EQ(ctl({"commit", id}).status, 0);
  struct stat committed{}, patched{};
  EXPECT_EQ(lstat((repo + "/docs").c_str(), &committed), 0);
  EXPECT_TRUE(S_ISLNK(committed.st_mode));
  EXPECT_EQ(lstat((copy + "/docs").c_str(), &patched), 0);
  EXPECT_TRUE(S_ISLNK(patched.st_mode)) << patch;
  World().Sandboxctl(kAlice, {"destroy", id});
}

}  // namespace
}  // namespace sandboxd::it
