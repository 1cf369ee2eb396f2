// After sandboxd is killed and every mount it made is gone (as after a reboot), every sandbox
// comes back: mounted again, with its changes, its decisions and its state (a suspended one
// stays suspended).

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace sandboxd::it {
namespace {

TEST(RecoveryTest, TwentySandboxesComeBackAfterAKillAndTheLossOfEveryMount) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  constexpr int kSandboxes = 20;
  std::vector<std::string> ids;
  std::vector<std::string> changes;
  for (int i = 0; i < kSandboxes; ++i) {
    std::string id = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
    ASSERT_FALSE(id.empty());
    std::string n = std::to_string(i);
    ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo " + n + " >> a.txt && echo new" + n + " > n" + n + ".txt && rm b.txt"}).status, 0);
    ASSERT_EQ(Ctl({"approve", id, "b.txt"}).status, 0);
    if (i % 5 == 4) {
      ASSERT_EQ(Ctl({"suspend", id}).status, 0);
    }
    ids.push_back(id);
  }
  for (int i = 0; i < kSandboxes; ++i)
    if (i % 5 != 4) changes.push_back(Ctl({"changes", ids[i]}).out);

  w.KillDaemon();
  // As after a reboot, the overlays are gone too: they went with the daemon's mount namespace.
  ASSERT_EQ(w.RunAs("root", {"sh", "-c", "grep -c ' " + w.dir() + "/run/' /proc/self/mountinfo"}).out, "0\n");
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();

  size_t active = 0;
  for (int i = 0; i < kSandboxes; ++i) {
    SCOPED_TRACE("sandbox " + std::to_string(i));
    auto info = nlohmann::json::parse(Ctl({"--json", "show", ids[i]}).out, nullptr, false);
    ASSERT_TRUE(info.is_object());
    if (i % 5 == 4) {
      EXPECT_EQ(info["state"], "suspended");
      ASSERT_EQ(Ctl({"resume", ids[i]}).status, 0);
    } else {
      EXPECT_EQ(info["state"], "active");
      EXPECT_EQ(Ctl({"changes", ids[i]}).out, changes[active++]);
    }
    std::string left = Ctl({"changes", ids[i]}).out;
    EXPECT_NE(left.find("D b.txt [approved]"), std::string::npos) << left;
    EXPECT_NE(left.find("A n" + std::to_string(i) + ".txt"), std::string::npos) << left;
    // Mounted again: a job sees its changes.
    Result seen = Ctl({"run", ids[i], "--", "cat", "n" + std::to_string(i) + ".txt"});
    EXPECT_EQ(seen.out, "new" + std::to_string(i) + "\n") << seen.err;
  }
  for (const auto& id : ids) EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// Orphans both ways: a state directory without a record is removed, and said so; a record
// whose layers are gone comes back empty, and said so.
TEST(RecoveryTest, OrphansAreReportedAndCleanedUp) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string id = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo x > x.txt"}).status, 0);
  w.KillDaemon();
  const std::string orphan = "0123456789abcdef";
  std::string sandboxes = w.dir() + "/state/sandboxes/";
  ASSERT_EQ(w.RunAs("root", {"sh", "-c", "mkdir -p " + sandboxes + orphan + "/upper/0 && echo lost > " + sandboxes + orphan +
                                             "/upper/0/f && rm -rf " + sandboxes + id + "/upper"})
                .status,
            0);
  const size_t log_start = w.DaemonLog().size();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  std::string log = w.DaemonLog().substr(log_start);
  EXPECT_NE(log.find("removed the remains of sandbox " + orphan), std::string::npos) << log;
  EXPECT_NE(w.RunAs("root", {"test", "-e", sandboxes + orphan}).status, 0) << "the orphan directory is still there";
  EXPECT_NE(log.find("sandbox " + id + ": the changes of root"), std::string::npos) << log;
  EXPECT_EQ(Ctl({"changes", id}).out, "");
  EXPECT_EQ(Ctl({"run", id, "--", "true"}).status, 0);
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// What a stop cut off of a destroy's emptying of the trash goes after the start, beside the first
// calls, which do not wait for it (a million files take minutes).
TEST(RecoveryTest, TheTrashLeftByAStopIsEmptiedAfterTheStart) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  w.KillDaemon();
  const std::string left = w.dir() + "/state/trash/0123456789abcdef-left";
  ASSERT_EQ(w.RunAs("root", {"sh", "-c", "mkdir -p " + left + "/d && cd " + left + "/d && seq 1 20000 | xargs touch"}).status, 0);
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_EQ(Ctl({"list"}).status, 0);
  EXPECT_TRUE(WaitUntil([&] { return w.RunAs("root", {"test", "-e", left}).status != 0; }, std::chrono::seconds(60)))
      << "the trash was not emptied";
}

}  // namespace
}  // namespace sandboxd::it
