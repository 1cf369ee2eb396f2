// `sandboxctl log SANDBOX`: a sandbox's commits numbered from 1 within it, whatever other
// sandboxes committed before (the journal's ids are daemon-wide), with time, state and entries,
// their paths with -v; and undo names the commit it takes back by that number.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class CommitLogTest : public AliceSandboxTest {};

TEST_F(CommitLogTest, CommitsAreNumberedWithinTheSandboxAndUndoNamesItsNumber) {
  // Another sandbox's commit first: the daemon-wide ids move on, this sandbox's numbers do not.
  std::string other_project = World().MakeProject(kAlice);
  Result other = World().Sandboxctl(kAlice, {"create", other_project});
  ASSERT_EQ(other.status, 0) << other.err;
  std::string other_id = other.out.substr(0, other.out.find('\n'));
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", other_id, "--", "sh", "-c", "echo o > other.txt"}).status, 0);
  ASSERT_EQ(World().Sandboxctl(kAlice, {"commit", other_id, "--all"}).status, 0);

  EXPECT_EQ(Ctl({"log", id_}).err, "No commits in sandbox " + id_ + " yet.\n");
  Job("echo one > one.txt; echo two > two.txt");
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  Job("echo three > three.txt");
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);

  Result log = Ctl({"log", id_});
  EXPECT_EQ(log.status, 0) << log.err;
  EXPECT_NE(log.out.find("commit 1  "), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("  committed  2 entries\n"), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("commit 2  "), std::string::npos) << log.out;
  EXPECT_EQ(log.out.find("commit 3"), std::string::npos) << log.out;

  Result undone = Ctl({"undo", id_});
  EXPECT_EQ(undone.status, 0) << undone.err;
  EXPECT_NE(undone.err.find("Undid commit 2 of sandbox " + id_), std::string::npos) << undone.err;
  Result verbose = Ctl({"log", "-v", id_});
  EXPECT_NE(verbose.out.find("  undone  1 entry\n    three.txt\n"), std::string::npos) << verbose.out;
  EXPECT_NE(verbose.out.find("    one.txt\n"), std::string::npos) << verbose.out;
  auto json = nlohmann::json::parse(Ctl({"--json=short", "log", id_}).out, nullptr, false);
  ASSERT_TRUE(json.is_array() && json.size() == 2) << json.dump();
  EXPECT_EQ(json[0]["number"], 1);
  EXPECT_EQ(json[0]["state"], "committed");
  EXPECT_EQ(json[1]["state"], "undone");
  EXPECT_EQ(json[1]["paths"], nlohmann::json::array({"three.txt"}));

  // The numbering holds across a restart of the daemon.
  const std::string before_restart = Ctl({"log", id_}).out;
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  EXPECT_EQ(Ctl({"log", id_}).out, before_restart);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", other_id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
