// Everything the owner set or decided survives every way the daemon keeps state (DESIGN, "Data
// safety"): each create option and each decision (per file, per hunk and per part of a hunk) is set, the state is
// kept one of the ways (restart, crash, idle exit, suspend + resume), then read back over D-Bus
// and checked to be still in force, not just still displayed.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "bus_monitor.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

enum class Way { kRestart, kCrash, kIdleExit, kSuspendResume };

std::string WayName(const testing::TestParamInfo<Way>& info) {
  switch (info.param) {
    case Way::kRestart: return "Restart";
    case Way::kCrash: return "Crash";
    case Way::kIdleExit: return "IdleExit";
    case Way::kSuspendResume: return "SuspendResume";
  }
  return "?";
}

/// Keeps the daemon's state `way`; `ids` are the sandboxes to suspend and resume.
void Keep(Way way, const std::vector<std::string>& ids) {
  Harness& w = World();
  switch (way) {
    case Way::kRestart:
      w.StopDaemon();
      ASSERT_TRUE(w.StartDaemon());
      break;
    case Way::kCrash:
      w.KillDaemon();
      ASSERT_TRUE(w.StartDaemon());
      break;
    case Way::kIdleExit:
      w.StopDaemon();
      ASSERT_TRUE(w.StartDaemon({"--idle-exit", "1"}));
      ASSERT_TRUE(WaitUntil([&] { return !w.NameOwned("org.sandboxd.Sandbox1"); }, 20s)) << "no idle exit";
      ASSERT_TRUE(w.StartDaemon());
      break;
    case Way::kSuspendResume:
      for (const auto& id : ids) {
        Result suspended = Ctl({"suspend", id});
        ASSERT_EQ(suspended.status, 0) << suspended.err;
        Result resumed = Ctl({"resume", id});
        ASSERT_EQ(resumed.status, 0) << resumed.err;
      }
      break;
  }
}

class KeptStateTest : public testing::TestWithParam<Way> {
 protected:
  void TearDown() override { World().EnsureDaemon(); }
};

TEST_P(KeptStateTest, EveryCreateOptionIsStillInForce) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  std::string hidden = w.MakeProject(kAlice);  // a directory of hers a job would otherwise read
  WriteWhole(hidden + "/secret", "SECRET\n");
  w.RunAs("root", {"chown", "-R", kAlice, hidden});
  Result created = Ctl({"create", "--network", "--shared", "--quota", "10M", "--ttl", "1h", "--hide", hidden, project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  // Expires 3 s after its last use: the TTL is enforced by garbage collection.
  Result brief = Ctl({"create", "--ttl", "3s", w.MakeProject(kAlice)});
  ASSERT_EQ(brief.status, 0) << brief.err;
  std::string brief_id = Trim(brief.out);

  ASSERT_NO_FATAL_FAILURE(Keep(GetParam(), {id, brief_id}));

  Result shown = Ctl({"show", "--json", id});
  ASSERT_EQ(shown.status, 0) << shown.err;
  auto info = nlohmann::json::parse(shown.out);
  EXPECT_EQ(info["network"], true);
  EXPECT_EQ(info["shared"], true);
  EXPECT_EQ(info["quota_bytes"], 10u << 20);
  EXPECT_EQ(info["ttl_sec"], 3600u);
  EXPECT_EQ(info["hide"], nlohmann::json::array({hidden}));

  // In force: the hidden directory is empty to a job; the network is there without asking;
  // another shared sandbox may overlap it; the quota is counted against.
  Result peek = Ctl({"run", id, "--", "sh", "-c", "cat " + hidden + "/secret; ls -A " + hidden});
  EXPECT_EQ(peek.out.find("SECRET"), std::string::npos) << "a job read a hidden file: " << peek.out;
  EXPECT_EQ(peek.out.find("secret"), std::string::npos) << "a job listed a hidden directory: " << peek.out;
  Result online = Ctl({"run", id, "--", "sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort"});
  EXPECT_EQ(online.status, 0) << online.err;
  EXPECT_NE(online.out, "lo\n") << "the sandbox lost its network";
  Result beside = Ctl({"create", "--shared", project});
  EXPECT_EQ(beside.status, 0) << "a shared sandbox stopped being shared: " << beside.err;
  if (beside.status == 0) Ctl({"destroy", Trim(beside.out)});
  // The quota: 12 MiB written in one go either fails in the job (a hard limit) or leaves the
  // sandbox over its quota, so that no further job starts (a limit checked after writes).
  Result over = Ctl({"run", id, "--", "sh", "-c", "head -c 12582912 /dev/zero > big"});
  Result next = Ctl({"run", id, "--", "true"});
  EXPECT_TRUE(over.status != 0 || next.status != 0) << "12 MiB fit in a sandbox with a 10 MiB quota";
  EXPECT_EQ(Ctl({"discard", id}).status, 0);

  // The TTL: idle past it, the brief one is collected, the other kept.
  std::this_thread::sleep_for(3500ms);
  Result collected = w.Sandboxctl("root", {"gc"});
  EXPECT_EQ(collected.status, 0) << collected.err;
  EXPECT_NE(Ctl({"show", brief_id}).status, 0) << "a sandbox past its TTL was kept";
  EXPECT_EQ(Ctl({"show", id}).status, 0);
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
  Ctl({"destroy", brief_id});
}

/// 20 numbered lines; a job edits lines 2 and 18 so that the diff has two hunks (lines 5 and
/// 8: one hunk of two parts).
std::string Lines(const std::string& second, const std::string& eighteenth, int first = 2, int last = 18) {
  std::string text;
  for (int i = 1; i <= 20; ++i)
    text += (i == first ? second : i == last ? eighteenth : "line " + std::to_string(i)) + "\n";
  return text;
}

TEST_P(KeptStateTest, EveryDecisionIsStillInForce) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  for (const char* name : {"approved.txt", "rejected.txt", "pending.txt"}) WriteWhole(project + "/" + name, "old\n");
  WriteWhole(project + "/hunks.txt", Lines("line 2", "line 18"));
  WriteWhole(project + "/parts.txt", Lines("line 5", "line 8", 5, 8));
  w.RunAs("root", {"chown", "-R", kAlice, project});
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  Result job = Ctl({"run", id, "--", "sh", "-c",
                    "for f in approved rejected pending; do echo new > $f.txt; done; "
                    "sed -i -e 's/^line 2$/LINE TWO/' -e 's/^line 18$/LINE EIGHTEEN/' hunks.txt; "
                    "sed -i -e 's/^line 5$/LINE FIVE/' -e 's/^line 8$/LINE EIGHT/' parts.txt"});
  ASSERT_EQ(job.status, 0) << job.err;
  for (const auto& args : std::vector<std::vector<std::string>>{{"approve", id, "approved.txt"},
                                                                {"reject", id, "rejected.txt"},
                                                                {"approve", id, "hunks.txt:1"},
                                                                {"reject", id, "hunks.txt:2"},
                                                                {"approve", id, "parts.txt:1.2"},
                                                                {"reject", id, "parts.txt:1.1"}}) {
    Result decided = Ctl(args);
    ASSERT_EQ(decided.status, 0) << args[0] << " " << args[2] << ": " << decided.err;
  }
  std::string before = Ctl({"changes", id}).out;

  ASSERT_NO_FATAL_FAILURE(Keep(GetParam(), {id}));

  EXPECT_EQ(Ctl({"changes", id}).out, before);
  // In force: a plain commit takes the approved file and hunk only; --all then takes what was
  // pending and never what was rejected.
  Result committed = Ctl({"commit", id});
  EXPECT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project + "/approved.txt"), "new\n");
  EXPECT_EQ(ReadWhole(project + "/rejected.txt"), "old\n");
  EXPECT_EQ(ReadWhole(project + "/pending.txt"), "old\n");
  EXPECT_EQ(ReadWhole(project + "/hunks.txt"), Lines("LINE TWO", "line 18"));
  EXPECT_EQ(ReadWhole(project + "/parts.txt"), Lines("line 5", "LINE EIGHT", 5, 8));
  Result all = Ctl({"commit", "--all", id});
  EXPECT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(ReadWhole(project + "/pending.txt"), "new\n");
  EXPECT_EQ(ReadWhole(project + "/rejected.txt"), "old\n") << "a rejected file was committed";
  EXPECT_EQ(ReadWhole(project + "/hunks.txt"), Lines("LINE TWO", "line 18")) << "a rejected hunk was committed";
  EXPECT_EQ(ReadWhole(project + "/parts.txt"), Lines("line 5", "LINE EIGHT", 5, 8)) << "a rejected part was committed";
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// A decision about a rename is about the rename (docs/security.md, "Renames"): after each way of keeping
// state, an approved rename is still one, approved, and its commit moves the live file (same
// inode); a rejected one stays out of every commit. Suspend and resume rebuilds the upper from
// an archive (new inodes), where the pairing must be found again and the decisions still fit it.
TEST_P(KeptStateTest, EveryRenameDecisionIsStillInForce) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  WriteWhole(project + "/old.c", "int main(void) { return 0; }\n");
  WriteWhole(project + "/other.c", "int other(void) { return 1; }\n");
  w.RunAs("root", {"chown", "-R", kAlice, project});
  struct stat old_live;
  ASSERT_EQ(lstat((project + "/old.c").c_str(), &old_live), 0);
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "mv old.c new.c && mv other.c moved.c"}).status, 0);
  ASSERT_EQ(Ctl({"approve", id, "old.c"}).status, 0);   // one half names the whole rename
  ASSERT_EQ(Ctl({"reject", id, "moved.c"}).status, 0);
  std::string before = Ctl({"changes", id}).out;
  ASSERT_NE(before.find("A new.c (renamed from old.c) [approved]"), std::string::npos) << before;
  ASSERT_NE(before.find("D other.c (renamed to moved.c) [rejected]"), std::string::npos) << before;

  ASSERT_NO_FATAL_FAILURE(Keep(GetParam(), {id}));

  EXPECT_EQ(Ctl({"changes", id}).out, before);
  Result committed = Ctl({"commit", id});
  EXPECT_EQ(committed.status, 0) << committed.err;
  struct stat moved;
  ASSERT_EQ(lstat((project + "/new.c").c_str(), &moved), 0) << "the approved rename was not committed";
  EXPECT_EQ(moved.st_ino, old_live.st_ino) << "the rename went live as a copy, not as a move of the live file";
  EXPECT_NE(lstat((project + "/old.c").c_str(), &moved), 0);
  Ctl({"commit", "--all", id});  // takes nothing: what is left is rejected
  EXPECT_EQ(ReadWhole(project + "/other.c"), "int other(void) { return 1; }\n") << "a rejected rename was committed";
  EXPECT_NE(lstat((project + "/moved.c").c_str(), &moved), 0) << "a rejected rename was committed";
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// The other half of the promise: a decision holds for the content it was made on only. A job
// that rewrites an approved file and puts its size and mtime back, and a live edit made while
// the sandbox is suspended, each make the change pending again, suspend or not.
TEST(KeptDecisionTest, ADecisionThatLapsedBeforeASuspendDoesNotComeBackAfterIt) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  for (const char* name : {"a.txt", "b.txt"}) WriteWhole(project + "/" + name, "old\n");
  w.RunAs("root", {"chown", "-R", kAlice, project});
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo new > a.txt; echo new > b.txt"}).status, 0);
  ASSERT_EQ(Ctl({"approve", id, "a.txt", "b.txt"}).status, 0);
  // Same size, same mtime, other content: only the ctime tells.
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "touch -r a.txt stamp; echo BAD > a.txt; touch -r stamp a.txt; rm stamp"}).status, 0);
  ASSERT_EQ(Ctl({"suspend", id}).status, 0);
  WriteWhole(project + "/b.txt", "live, again\n");  // the live side moves on while it is suspended
  ASSERT_EQ(Ctl({"resume", id}).status, 0);
  EXPECT_EQ(Ctl({"changes", id}).out, "M a.txt\nM b.txt [conflict: changed in the live tree]\n");
  Result committed = Ctl({"commit", id});
  EXPECT_EQ(ReadWhole(project + "/a.txt"), "old\n") << "content the owner never saw was committed";
  EXPECT_EQ(ReadWhole(project + "/b.txt"), "live, again\n");
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// A sandbox is mounted again after each commit; a job of another sandbox running meanwhile
// must not keep the first one's overlay alive (its layers may be used by one overlay only, and
// a second mount over them would be refused or, worse, share them).
TEST(KeptMountTest, ACommitWhileAnotherSandboxsJobRunsMountsTheSandboxAgainWithItsIndex) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string first = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  std::string second = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  ASSERT_EQ(Ctl({"run", first, "--", "sh", "-c", "echo new > a.txt"}).status, 0);
  pid_t busy = StartSandboxctl(kAlice, {"run", second, "--", "sleep", "4"});
  std::this_thread::sleep_for(1s);
  Result committed = Ctl({"commit", "--all", first});
  EXPECT_EQ(committed.status, 0) << committed.err;
  Result again = Ctl({"run", first, "--", "sh", "-c", "echo newer > a.txt && ln a.txt hard"});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(w.DaemonMounts().find(first), std::string::npos) << "sandbox " << first << " is not mounted";
  int status = 0;
  waitpid(busy, &status, 0);
  Ctl({"destroy", first});
  Ctl({"destroy", second});
}

// A job's end counts the change set from what the sandbox's change feed kept since the last
// settling (job_settling.h). That knowledge lives in the daemon's memory, with the feed: after
// each way of keeping state, the first job's end must not count from it (a feed kept across a
// suspend would follow layers the archive replaced; a restarted daemon knows nothing), and the
// count ChangeSetChanged carries is the change set a listing shows, then and after the next job.
TEST_P(KeptStateTest, TheCountAJobsEndAnnouncesIsTheChangeSet) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "echo a > a.txt && echo b > b.txt && echo c > c.txt"}, {.cwd = project}).status, 0);
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  const std::string id = Trim(created.out);
  auto job_then_count = [&](const std::string& what, const std::string& script) {
    SCOPED_TRACE(what);
    BusMonitor monitor(kAlice, "kept-count-" + id);
    ASSERT_TRUE(monitor.Ready()) << monitor.Text();
    Result run = Ctl({"run", id, "--", "sh", "-c", script});
    ASSERT_EQ(run.status, 0) << run.err;
    ASSERT_TRUE(WaitUntil([&] { return monitor.ChangeSetChanged().first > 0; }, 30s)) << monitor.Text();
    std::string listing = Ctl({"changes", id}).out;
    EXPECT_EQ(monitor.ChangeSetChanged().second, static_cast<long>(std::count(listing.begin(), listing.end(), '\n')))
        << "the change set:\n" << listing;
  };
  job_then_count("a first job", "echo new > one.txt && echo more >> a.txt");
  job_then_count("a second, counted from what it touched", "echo more >> b.txt");
  Keep(GetParam(), {id});
  job_then_count("the first job after", "rm one.txt && echo c2 > c.txt && echo two > two.txt");
  job_then_count("and the next", "echo back > two.txt && rm b.txt");
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

INSTANTIATE_TEST_SUITE_P(Ways, KeptStateTest,
                         testing::Values(Way::kRestart, Way::kCrash, Way::kIdleExit, Way::kSuspendResume), WayName);

}  // namespace
}  // namespace sandboxd::it
