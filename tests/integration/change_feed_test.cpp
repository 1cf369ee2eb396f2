// The live change feed as a desktop app follows it: a listener of alice's on the bus hears
// Sandbox.ChangesSeen name what her job is doing while the job still runs, with the kind each
// path holds, each path once per announcement, the last ones before the job's Finished; paths
// of a second root carry its prefix.

#include <gtest/gtest.h>

#include <string>

#include "bus_monitor.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

std::string CreateOver(const std::vector<std::string>& roots) {
  std::vector<std::string> args = {"create"};
  args.insert(args.end(), roots.begin(), roots.end());
  Result r = World().Sandboxctl(kAlice, args);
  EXPECT_EQ(r.status, 0) << r.err;
  return Trim(r.out);
}

/// Starts `script` in the sandbox through the bus (output captured) and returns the job's path.
std::string StartJob(const std::string& sandbox_path, const std::string& script) {
  Result run = World().Gdbus(kAlice, sandbox_path, "org.sandboxd.Sandbox1.Sandbox.Run",
                             {"['sh', '-c', '" + script + "']", "''", "{}", "{}", "{}", "0"});
  EXPECT_EQ(run.status, 0) << run.err;
  size_t quote = run.out.find('\'');
  if (quote == std::string::npos) return "";
  return run.out.substr(quote + 1, run.out.find('\'', quote + 1) - quote - 1);
}

TEST(ChangeFeedTest, AListenerHearsWhatTheJobChangesWhileItRuns) {
  SANDBOXD_REQUIRE_WORLD();
  BusMonitor alice(kAlice, "change-feed-alice");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  std::string id = CreateOver({World().MakeProject(kAlice)});
  ASSERT_FALSE(id.empty());
  const std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id;
  const std::string seen = sandbox + ": org.sandboxd.Sandbox1.Sandbox.ChangesSeen ";
  // The job edits, adds and deletes, then sleeps: all of that must be heard before it ends.
  std::string job = StartJob(sandbox, "mkdir -p src && echo int > src/app.c && echo changed > b.txt && rm c.txt && sleep 4 && echo late > late.txt");
  ASSERT_FALSE(job.empty());
  const std::string finished = job + ": org.sandboxd.Sandbox1.Job.Finished";
  ASSERT_TRUE(alice.WaitFor("'src/app.c', 'added'")) << alice.Text();
  ASSERT_TRUE(alice.WaitFor("'b.txt', 'modified'")) << alice.Text();
  ASSERT_TRUE(alice.WaitFor("'c.txt', 'deleted'")) << alice.Text();
  EXPECT_FALSE(Contains(alice.Text(), finished)) << "heard only after the job ended:\n" << alice.Text();
  EXPECT_TRUE(Contains(alice.Text(), seen)) << alice.Text();
  // What the job did last comes before its end is announced.
  ASSERT_TRUE(alice.WaitFor(finished)) << alice.Text();
  std::string heard = alice.Text();
  size_t late = heard.find("'late.txt', 'added'");
  ASSERT_NE(late, std::string::npos) << heard;
  EXPECT_LT(late, heard.find(finished)) << heard;
  // A path touched many times in a period is said once in it: no announcement names it twice.
  for (size_t at = heard.find(seen); at != std::string::npos; at = heard.find(seen, at + 1)) {
    std::string line = heard.substr(at, heard.find('\n', at) - at);
    size_t first = line.find("'b.txt'");
    EXPECT_TRUE(first == std::string::npos || line.find("'b.txt'", first + 1) == std::string::npos) << line;
  }
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// A job run with --no-live-feed is not followed; the next one, without it, is.
TEST(ChangeFeedTest, AJobRunWithoutTheFeedAnnouncesNothing) {
  SANDBOXD_REQUIRE_WORLD();
  BusMonitor alice(kAlice, "change-feed-off");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  std::string id = CreateOver({World().MakeProject(kAlice)});
  ASSERT_FALSE(id.empty());
  Result quiet = World().Sandboxctl(kAlice, {"run", "--no-live-feed", id, "sh", "-c", "echo q > quiet.txt; sleep 0.6"});
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  Result heard = World().Sandboxctl(kAlice, {"run", id, "sh", "-c", "echo h > heard.txt"});
  ASSERT_EQ(heard.status, 0) << heard.err;
  EXPECT_TRUE(alice.WaitFor("'heard.txt', 'added'")) << alice.Text();
  EXPECT_EQ(alice.Text().find("quiet.txt"), std::string::npos) << alice.Text();
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// With several roots, a path carries its root's index as GetChanges's do ("1/..." beside root 1).
TEST(ChangeFeedTest, APathOfASecondRootCarriesItsPrefix) {
  SANDBOXD_REQUIRE_WORLD();
  BusMonitor alice(kAlice, "change-feed-roots");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  std::string first = World().MakeProject(kAlice);
  std::string second = World().MakeProject(kAlice);
  std::string id = CreateOver({first, second});
  ASSERT_FALSE(id.empty());
  std::string job = StartJob("/org/sandboxd/Sandbox1/sandbox/" + id, "echo x > " + second + "/second.txt");
  ASSERT_FALSE(job.empty());
  EXPECT_TRUE(alice.WaitFor("[(uint32 1, '1/second.txt', 'added')]")) << alice.Text();
  // The feed may speak before the job has ended: destroy refuses a sandbox whose jobs run.
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", "--cancel-jobs", id}).status, 0);
}

// One user may not take the live feed from everyone (issue 40, item 6): the daemon's share of
// the kernel's inotify instances is shared per user. Bob's one sandbox over 40 roots (an
// instance each) while his job runs; alice's job is still followed, and bob's own feed is told
// it lost what it could not follow. Before, bob took the whole share and alice's job got `lost`.
TEST(ChangeFeedTest, OneUsersFeedsLeaveOthersTheirShare) {
  SANDBOXD_REQUIRE_WORLD();
  std::vector<std::string> args = {"create"};
  for (int i = 0; i < 40; ++i) args.push_back(World().MakeProject(kBob));
  Result made = World().Sandboxctl(kBob, args);
  ASSERT_EQ(made.status, 0) << made.err;
  const std::string bobs = Trim(made.out);
  BusMonitor bob(kBob, "change-feed-bob-share");
  ASSERT_TRUE(bob.Ready()) << bob.Text();
  Result started = World().Gdbus(kBob, "/org/sandboxd/Sandbox1/sandbox/" + bobs, "org.sandboxd.Sandbox1.Sandbox.Run",
                                 {"['sleep', '60']", "''", "{}", "{}", "{}", "0"});
  ASSERT_EQ(started.status, 0) << started.err;
  EXPECT_TRUE(bob.WaitFor("uint32 0, true)")) << "bob's feed was not told it lost roots:\n" << bob.Text();

  BusMonitor alice(kAlice, "change-feed-alice-share");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  std::string id = CreateOver({World().MakeProject(kAlice)});
  ASSERT_FALSE(id.empty());
  Result run = World().Sandboxctl(kAlice, {"run", id, "sh", "-c", "echo mine > mine.txt; sleep 1"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(alice.WaitFor("[(uint32 0, 'mine.txt', 'added')]")) << alice.Text() << World().DaemonLog();
  EXPECT_FALSE(Contains(alice.Text(), ", true)")) << "alice's feed lost changes:\n" << alice.Text();
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
  EXPECT_EQ(World().Sandboxctl(kBob, {"destroy", "--cancel-jobs", bobs}).status, 0);
}

// A sandbox's feed is kept between its jobs (a job's start then walks nothing, its end looks at
// what it touched), holding an inotify instance per root while the sandbox sits idle. A user's
// share is 8 instances on this machine's limits: one job in each of 12 sandboxes, one after
// another, must each be followed all the same, the idle feeds making room, and each job's
// change said without `lost`.
TEST(ChangeFeedTest, FeedsKeptBetweenJobsMakeRoomForOtherSandboxes) {
  SANDBOXD_REQUIRE_WORLD();
  BusMonitor alice(kAlice, "change-feed-alice-kept");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  std::vector<std::string> ids;
  for (int i = 0; i < 12; ++i) {
    ids.push_back(CreateOver({World().MakeProject(kAlice)}));
    ASSERT_FALSE(ids.back().empty());
    std::string file = "kept-" + std::to_string(i) + ".txt";
    Result run = World().Sandboxctl(kAlice, {"run", ids.back(), "sh", "-c", "echo x > " + file});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(alice.WaitFor("[(uint32 0, '" + file + "', 'added')]")) << "sandbox " << i << ":\n" << alice.Text() << World().DaemonLog();
  }
  EXPECT_FALSE(Contains(alice.Text(), ", true)")) << "a feed lost changes:\n" << alice.Text();
  for (const auto& id : ids) EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
