// A root replaced under a mounted sandbox. The overlay keeps the directory it was mounted over,
// but a commit, undo or change listing used to open the root again by its path: whoever could
// rename in the root's parent (a folder shared with a team, a world-writable one without the
// sticky bit) could move the owner's project aside, put a directory of their own at its name,
// and have the owner's next commit write her sandbox's files into it. The sandbox's record now
// keeps each root's file handle, and every opening of a root by its path is checked against it.

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "attack_tools.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

Result Alice(const std::vector<std::string>& args) { return World().Sandboxctl(kAlice, args); }

std::string ParentOf(const std::string& path) { return path.substr(0, path.rfind('/')); }

/// Alice's project, open to her team (0777), in a folder she shares likewise; a sandbox of hers over it
/// whose job made a new file with her secret in it. Then `before_swap` (a restart, a suspend),
/// and bob moves her project aside and makes his own directory at its name, open to all.
/// Returns the sandbox's id.
std::string SwapAfterAJob(const std::string& project, const std::function<void(const std::string& id)>& before_swap) {
  Harness& w = World();
  EXPECT_EQ(w.RunAs(kAlice, {"chmod", "0777", ParentOf(project), project}).status, 0);
  Result created = Alice({"create", project});
  EXPECT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result job = Alice({"run", id, "--", "sh", "-c", "echo ALICE-SECRET > secret.txt"});
  EXPECT_EQ(job.status, 0) << job.err;
  before_swap(id);
  Result swapped = w.RunAs(kBob, {"sh", "-c", "mv proj proj.moved && mkdir proj && chmod 0777 proj"}, {.cwd = ParentOf(project)});
  EXPECT_EQ(swapped.status, 0) << swapped.err;
  return id;
}

/// What alice's refusals must say, and what must hold after them: nothing of hers in bob's
/// directory, her project as it was, her change still in the sandbox once she puts the project
/// back, and then committed where it belongs.
void ExpectRefusedThenCommittedAfterPuttingBack(const std::string& project, const std::string& id) {
  Harness& w = World();
  const std::string refusal = "root " + project + " of sandbox " + id + " is no longer the directory the sandbox was made over";
  Result committed = Alice({"commit", id, "--all"});
  EXPECT_EQ(committed.status, 1) << "a commit went into bob's directory:\n" << committed.out << committed.err;
  EXPECT_NE(committed.err.find(refusal), std::string::npos) << committed.err;
  EXPECT_EQ(access((project + "/secret.txt").c_str(), F_OK), -1) << "alice's file landed in the directory bob put in place of her root";
  Result listed = Alice({"changes", id});
  EXPECT_EQ(listed.status, 1) << "the change set was read against bob's directory:\n" << listed.out;
  EXPECT_NE(listed.err.find(refusal), std::string::npos) << listed.err;
  EXPECT_EQ(ReadWhole(project + ".moved/a.txt"), "alpha\n");
  EXPECT_EQ(access((project + ".moved/secret.txt").c_str(), F_OK), -1);

  // Alice takes her project back: the sandbox is whole and commits where it was made.
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "rmdir proj && mv proj.moved proj"}, {.cwd = ParentOf(project)}).status, 0);
  Result again = Alice({"commit", id, "--all"});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(ReadWhole(project + "/secret.txt"), "ALICE-SECRET\n");
  EXPECT_EQ(Alice({"destroy", id}).status, 0);
}

TEST(ReplacedRootTest, ACommitNeverLandsInADirectoryPutInPlaceOfTheRoot) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  std::string id = SwapAfterAJob(project, [](const std::string&) {});
  ExpectRefusedThenCommittedAfterPuttingBack(project, id);
}

// What the root was is kept with the sandbox: a restart of the daemon and a suspend and resume
// in between forget nothing of it.
TEST(ReplacedRootTest, TheRootStaysKnownAcrossARestartAndASuspend) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string id = SwapAfterAJob(project, [&w](const std::string& id) {
    w.StopDaemon();
    ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
    Result suspended = Alice({"suspend", id});
    ASSERT_EQ(suspended.status, 0) << suspended.err;
    Result resumed = Alice({"resume", id});
    ASSERT_EQ(resumed.status, 0) << resumed.err;
  });
  ExpectRefusedThenCommittedAfterPuttingBack(project, id);
}

}  // namespace
}  // namespace sandboxd::it
