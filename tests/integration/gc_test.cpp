// Expiry and garbage collection with real sandboxes: --ttl makes an idle sandbox expire and
// `sandboxctl gc` (polkit's manage action) remove it, never one with a job running; over the
// storage cap ([Storage] Cap=) the largest suspended sandbox goes, never an active one.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

bool Known(const std::string& id) { return Ctl({"show", id}).status == 0; }

TEST(GcTest, AnIdleSandboxPastItsTtlIsCollectedOneWithAJobRunningIsNot) {
  SANDBOXD_REQUIRE_WORLD();
  std::string idle = Trim(Ctl({"create", "--ttl", "1s", World().MakeProject(kAlice)}).out);
  std::string busy = Trim(Ctl({"create", "--ttl", "1s", World().MakeProject(kAlice)}).out);
  std::string lasting = Trim(Ctl({"create", World().MakeProject(kAlice)}).out);
  ASSERT_FALSE(idle.empty() || busy.empty() || lasting.empty());
  auto info = nlohmann::json::parse(Ctl({"--json", "show", idle}).out, nullptr, false);
  EXPECT_EQ(info["ttl_sec"], 1u);
  pid_t job = StartSandboxctl(kAlice, {"run", busy, "--", "sleep", "5"});
  std::this_thread::sleep_for(2500ms);
  // Bob may not collect (polkit says no to him); alice may.
  EXPECT_EQ(World().Sandboxctl(kBob, {"gc"}).status, 1);
  Result gc = Ctl({"gc"});
  ASSERT_EQ(gc.status, 0) << gc.err;
  EXPECT_NE(gc.out.find("Removed " + idle + ": expired"), std::string::npos) << gc.out;
  EXPECT_EQ(gc.out.find(busy), std::string::npos) << "a sandbox with a job running was collected: " << gc.out;
  EXPECT_FALSE(Known(idle));
  EXPECT_TRUE(Known(busy));
  EXPECT_TRUE(Known(lasting));
  kill(job, SIGINT);
  waitpid(job, nullptr, 0);
  EXPECT_EQ(Ctl({"destroy", busy}).status, 0);
  EXPECT_EQ(Ctl({"destroy", lasting}).status, 0);
}

TEST(GcTest, OverTheStorageCapTheLargestSuspendedSandboxGoes) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  auto make = [&](const std::string& megabytes, bool suspend) {
    std::string id = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
    EXPECT_EQ(Ctl({"run", id, "--", "sh", "-c", "head -c " + megabytes + "M /dev/urandom > data"}).status, 0);
    if (suspend) {
      EXPECT_EQ(Ctl({"suspend", id}).status, 0);
    }
    return id;
  };
  // 6 MiB active, then 3, 2 and 2 MiB suspended: 13 MiB. Under a cap of 11 MiB one has to go.
  std::string active = make("6", false), big = make("3", true), first = make("2", true), second = make("2", true);
  std::ofstream(w.ConfigPath()) << "[Storage]\nCap=11M\nDefaultTtl=1h\nDefaultQuota=5G\n";
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  Result gc = Ctl({"gc"});
  // (And a sandbox made now, without --ttl or --quota, gets the configured defaults.)
  std::string defaulted = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  auto info = nlohmann::json::parse(Ctl({"--json", "show", defaulted}).out, nullptr, false);
  EXPECT_EQ(info["ttl_sec"], 3600u);
  EXPECT_EQ(info["quota_bytes"], uint64_t{5} << 30);
  EXPECT_EQ(Ctl({"destroy", defaulted}).status, 0);
  std::remove(w.ConfigPath().c_str());
  ASSERT_EQ(gc.status, 0) << gc.err;
  EXPECT_NE(gc.out.find("Removed " + big + ": the sandboxes together ("), std::string::npos) << gc.out;
  EXPECT_FALSE(Known(big));
  for (const auto& id : {active, first, second}) EXPECT_TRUE(Known(id)) << id << " was collected too: " << gc.out;
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  for (const auto& id : {active, first, second}) EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
