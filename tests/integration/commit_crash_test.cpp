// A commit of thousands of changes with sandboxd killed (SIGKILL) at several instants: after a
// restart the live tree must be exactly as before the commit or exactly as after it, contents,
// modes, symlinks and deletions included, and the sandbox must still be usable.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

#include "harness.h"

namespace sandboxd::it {
namespace {

// 1,200 live files in four directories; the job replaces 800, adds 800 beside them, deletes
// 200, changes the mode of 100, adds a directory of 100 files, replaces a directory by a file
// and a file by a symlink, and moves 10 files into a new directory (renames, which move the
// live files): over 2,000 changes.
constexpr const char* kMakeTree =
    "for d in 0 1 2 3; do mkdir -p d$d/sub; echo s > d$d/sub/s; i=0; while [ $i -lt 300 ]; do echo \"live $d $i\" > d$d/f$i; "
    "i=$((i+1)); done; done; seq 1 20 > h.txt";
constexpr const char* kJob =
    "for d in 0 1 2 3; do i=0; while [ $i -lt 200 ]; do echo \"sandbox $d $i\" > d$d/f$i; echo \"new $d $i\" > d$d/n$i; "
    "i=$((i+1)); done; while [ $i -lt 250 ]; do rm d$d/f$i; i=$((i+1)); done; while [ $i -lt 275 ]; do chmod 600 d$d/f$i; "
    "i=$((i+1)); done; done; mkdir -p fresh; i=0; while [ $i -lt 100 ]; do echo $i > fresh/$i; i=$((i+1)); done; "
    "rm -r d3/sub && echo was-a-dir > d3/sub; rm d2/f299 && ln -s f0 d2/f299; "
    "mkdir moved; i=280; while [ $i -lt 290 ]; do mv d0/f$i moved/f$i; i=$((i+1)); done";

/// Where a crash test's trees live: alice's home (the state directory's file system), or a file
/// system of its own, whose storage area then holds the sandbox's layers and commit areas.
struct Site {
  std::string parent;  ///< alice makes and removes her trees here
  std::string area;    ///< the storage area, "" for the state directory

  std::string StorageOf(const std::string& id) const {
    return (area.empty() ? World().dir() + "/state" : area) + "/sandboxes/" + id;
  }
};

Site Home() { return {getpwnam(kAlice)->pw_dir, ""}; }

/// Named for this process too: another test run on the machine (another worktree's) shares the
/// test users' homes, and must never replace this run's trees under its sandboxes.
std::string MakeTree(Harness& w, const Site& site, const std::string& name) {
  std::string dir = site.parent + "/" + name + "-" + std::to_string(getpid());
  Result r = w.RunAs(kAlice, {"sh", "-c", "rm -rf '" + dir + "' && mkdir -p '" + dir + "' && cd '" + dir + "' && " + kMakeTree});
  EXPECT_EQ(r.status, 0) << r.err;
  return dir;
}

/// Waits until sandbox `id`'s commit has journaled its steps and made its directory (the
/// moment files start to move), or `limit` passes. Returns whether it did.
bool WaitForCommitDirectory(const Site& site, const std::string& id, std::chrono::milliseconds limit) {
  std::string commits = site.StorageOf(id) + "/commits";
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (access(commits.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

/// Runs `commit ARGS` undisturbed and returns how long its files take to move: from the
/// moment its commit directory appears to the end of the call.
std::chrono::steady_clock::duration TimeMovingPart(const Site& site, const std::string& id,
                                                   const std::vector<std::string>& args) {
  const std::string err_path = World().dir() + "/timed-commit.err";
  pid_t client = StartSandboxctl(kAlice, args, err_path);
  EXPECT_TRUE(WaitForCommitDirectory(site, id, std::chrono::seconds(60)));
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  waitpid(client, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the undisturbed commit failed: " << ReadWhole(err_path);
  return std::chrono::steady_clock::now() - start;
}

/// Starts `commit ARGS`, and SIGKILLs sandboxd `fraction` of the way through the part where files
/// move; restarts it.
void KillDuringCommit(Harness& w, const Site& site, const std::string& id, const std::vector<std::string>& args,
                      std::chrono::steady_clock::duration moving, double fraction) {
  pid_t client = StartSandboxctl(kAlice, args);
  WaitForCommitDirectory(site, id, std::chrono::seconds(60));
  std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::microseconds>(moving * fraction));
  w.KillDaemon();
  waitpid(client, nullptr, 0);
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
}

/// The instants (fractions of the time files take to move) the partial-commit tests kill at:
/// `usual`, or SANDBOXD_CRASH_FRACTIONS (e.g. "0.9,0.95,1,1.05") to look closer at a stretch.
std::vector<double> KillFractions(std::vector<double> usual) {
  const char* asked = getenv("SANDBOXD_CRASH_FRACTIONS");
  if (asked == nullptr || *asked == '\0') return usual;
  std::vector<double> fractions;
  std::istringstream in(asked);
  for (std::string item; std::getline(in, item, ',');) fractions.push_back(std::stod(item));
  return fractions;
}

/// After a commit that a kill cut off and recovery finished: the sandbox agrees with the live
/// tree it made, so a later job's edit of a committed file is no conflict (the sights the job
/// recorded before the commit must not outlive it).
void ExpectNoStaleConflict(Harness& w, const std::string& id, const std::string& project) {
  Result job = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo again > d0/f0"});
  // (Seen once: the job's shell could not write d0/f0 after a recovery; what the sandbox showed
  // then tells where its view went wrong.)
  ASSERT_EQ(job.status, 0) << job.err << "\nchanges then:\n" << w.Sandboxctl(kAlice, {"changes", id}).out.substr(0, 4000)
                           << "\nls -la of the merged d0:\n" << w.RunAs(kAlice, {"ls", "-la", w.dir() + "/run/" + id + "/0", w.dir() + "/run/" + id + "/0/d0"}).out.substr(0, 3000);
  {
    Result done = w.Sandboxctl(kAlice, {"approve", id, "d0/f0"});
    ASSERT_EQ(done.status, 0) << done.err;
  }
  Result committed = w.Sandboxctl(kAlice, {"commit", id});
  EXPECT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project + "/d0/f0"), "again\n");
}

/// After a commit that a kill cut off before it went live: what the owner decided holds still.
void ExpectDecisionsKept(const std::string& changes) {
  EXPECT_NE(changes.find("A d0/n7 [approved]\n"), std::string::npos) << changes;
  EXPECT_NE(changes.find("M d0/f7 [approved]\n"), std::string::npos) << changes;
}

/// How the restarts since `log_start` found the commits they settled, for the test's output.
std::string Recoveries(size_t log_start) {
  const std::string log = World().DaemonLog().substr(log_start);
  std::string summary;
  for (const char* kind : {"was cut off before it started", "was cut off; finished it", "; took it back",
                           "was cut off while keeping its backups"}) {
    int count = 0;
    for (size_t at = log.find(kind); at != std::string::npos; at = log.find(kind, at + 1)) ++count;
    summary += std::string(summary.empty() ? "" : ", ") + std::to_string(count) + " \"" + kind + "\"";
  }
  return summary;
}

/// Commits of the whole change set at `site`, killed at several instants.
void KillWholeCommits(const Site& site) {
  Harness& w = World();
  const size_t log_start = w.DaemonLog().size();
  // The expected "after": the same job run directly on a copy.
  std::string reference = MakeTree(w, site, "crash-reference");
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", kJob}, {.cwd = reference}).status, 0);
  const auto after = Snapshot(reference);

  // One commit undisturbed, to know how long one takes.
  std::string project = MakeTree(w, site, "crash-project");
  const auto before = Snapshot(project);
  std::string id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
  {
    Result done = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", kJob}, {.cwd = project});
    ASSERT_EQ(done.status, 0) << done.err;
  }
  auto moving = TimeMovingPart(site, id, {"commit", id, "--all"});
  ASSERT_EQ(Snapshot(project), after);
  {
    Result done = w.Sandboxctl(kAlice, {"destroy", id});
    ASSERT_EQ(done.status, 0) << done.err;
  }

  int before_count = 0, after_count = 0;
  for (double fraction : {0.0, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9}) {
    SCOPED_TRACE("killed at " + std::to_string(fraction) + " of a commit");
    project = MakeTree(w, site, "crash-project");
    ASSERT_EQ(Snapshot(project), before);
    id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
    {
      Result done = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", kJob}, {.cwd = project});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    {
      Result done = w.Sandboxctl(kAlice, {"approve", id, "d0/n7", "d0/f7"});
      ASSERT_EQ(done.status, 0) << done.err;
    }

    KillDuringCommit(w, site, id, {"commit", id, "--all"}, moving, fraction);

    auto live = Snapshot(project);
    bool is_before = live == before, is_after = live == after;
    ASSERT_TRUE(is_before || is_after) << "live tree is neither before nor after the commit: " << DescribeMismatch(live, before, after);
    before_count += is_before;
    after_count += is_after;
    // The sandbox is usable and holds exactly what was not committed.
    Result changes = w.Sandboxctl(kAlice, {"changes", id});
    ASSERT_EQ(changes.status, 0) << changes.err;
    if (is_after) {
      EXPECT_EQ(changes.out, "");
      ExpectNoStaleConflict(w, id, project);
    } else {
      ExpectDecisionsKept(changes.out);
      {
        Result done = w.Sandboxctl(kAlice, {"commit", id, "--all"});
        ASSERT_EQ(done.status, 0) << done.err;
      }
      EXPECT_EQ(Snapshot(project), after);
    }
    {
      Result done = w.Sandboxctl(kAlice, {"destroy", id});
      ASSERT_EQ(done.status, 0) << done.err;
    }
  }
  // A test that cannot fail is no test: at least one kill must have landed inside a commit.
  EXPECT_NE(w.DaemonLog().find("was cut off", log_start), std::string::npos)
      << "no kill interrupted a commit (" << before_count << " before, " << after_count << " after)";
  // What recovery finished lost nothing: no sandbox may be said to come back without its changes.
  const size_t missing = w.DaemonLog().find("are missing from", log_start);
  EXPECT_EQ(missing, std::string::npos) << "a finished commit was reported as lost changes: "
                                        << w.DaemonLog().substr(missing == std::string::npos ? 0 : missing, 300);
  w.RunAs(kAlice, {"rm", "-rf", reference, project});
  std::printf("crash test: %d kills left the tree before the commit, %d after it; recovered: %s\n", before_count,
              after_count, Recoveries(log_start).c_str());
}

TEST(CommitCrashTest, KilledDaemonLeavesTheLiveTreeWhollyBeforeOrWhollyAfter) {
  SANDBOXD_REQUIRE_WORLD();
  KillWholeCommits(Home());
}

/// A tmpfs of its own at /mnt/sandboxd-it-crash-N, its top owned by root with `mode`, holding
/// alice's home; unmounted at the end.
class OtherFileSystem {
 public:
  explicit OtherFileSystem(const std::string& mode) {
    static std::mt19937_64 random{std::random_device{}()};
    top_ = "/mnt/sandboxd-it-crash-" + std::to_string(random() % 1000000000);
    if (mkdir(top_.c_str(), 0755) != 0) {
      error_ = "cannot make " + top_ + ": " + strerror(errno);
      return;
    }
    std::string options = "mode=" + mode + ",size=256m,uid=0,gid=0";
    if (mount("tmpfs", top_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      error_ = std::string("cannot mount a tmpfs: ") + strerror(errno);
      return;
    }
    mounted_ = true;
    World().LetDaemonSeeNewMounts();  // sandboxd's namespace sees it only so where / is private
    passwd* alice = getpwnam(kAlice);
    home_ = top_ + "/alice";
    if (mkdir(home_.c_str(), 0755) != 0 || chown(home_.c_str(), alice->pw_uid, alice->pw_gid) != 0) error_ = "cannot make " + home_;
  }
  ~OtherFileSystem() {
    if (mounted_) umount2(top_.c_str(), MNT_DETACH);
    rmdir(top_.c_str());
  }
  const std::string& error() const { return error_; }
  const std::string& top() const { return top_; }
  const std::string& home() const { return home_; }

 private:
  std::string top_, home_, error_;
  bool mounted_ = false;
};

// A separate /home: the root's file system is not the state directory's, and its storage area
// keeps the layers, so that the same journaled renames make the commit.
TEST(CommitCrashTest, OnAnotherFileSystemToo) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("0755");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  KillWholeCommits({fs.home(), fs.top() + "/.sandboxd"});
}

// A file system whose top others may write (like a user's USB stick) has no storage area: the
// layers stay in the state directory, and each commit copies its entries into a landing area in
// the root first. A kill at any instant must still leave the tree wholly before or after, and
// no landing area behind (the snapshots would show it).
TEST(CommitCrashTest, AcrossFileSystemsThroughALandingArea) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("1777");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  KillWholeCommits({fs.home(), ""});
}

/// Whether `path` (a Snapshot key: "/d1/f0") is one of the changes the partial-commit test rejects.
bool Rejected(const std::string& path) {
  return path.rfind("/d1/", 0) == 0 || path == "/d3/sub" || path.rfind("/d3/sub/", 0) == 0;
}

std::string WithoutApprovedMarks(std::string text) {
  for (size_t at = text.find(" [approved]"); at != std::string::npos; at = text.find(" [approved]")) text.erase(at, 11);
  return text;
}

/// `after`, except that the rejected paths are as `before` has them.
std::map<std::string, std::string> PartlyAfter(const std::map<std::string, std::string>& before,
                                               const std::map<std::string, std::string>& after) {
  std::map<std::string, std::string> mixed;
  for (const auto& [path, entry] : after)
    if (!Rejected(path)) mixed[path] = entry;
  for (const auto& [path, entry] : before)
    if (Rejected(path)) mixed[path] = entry;
  return mixed;
}

/// Partial commits at `site` (part of the change set rejected), killed at several instants.
void KillPartialCommits(const Site& site) {
  Harness& w = World();
  std::string reference = MakeTree(w, site, "crash-reference");
  const auto before = Snapshot(reference);
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", kJob}, {.cwd = reference}).status, 0);
  // h.txt is committed hunk by hunk: the first part of its first hunk approved, the rest rejected.
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "sed -i 's/^1$/one/' h.txt"}, {.cwd = reference}).status, 0);
  const auto after = PartlyAfter(before, Snapshot(reference));

  auto prepare = [&](std::string& project, std::string& id, std::string& pending_changes) {
    project = MakeTree(w, site, "crash-project");
    ASSERT_EQ(Snapshot(project), before);
    id = Trim(w.Sandboxctl(kAlice, {"create", project}).out);
    {
      Result done = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", kJob}, {.cwd = project});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    // Lines 1 and 4 are one hunk of two parts: the first approved, the second rejected.
    {
      Result done = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "sed -i -e 's/^1$/one/' -e 's/^4$/four/' -e 's/^20$/twenty/' h.txt"});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    {
      Result done = w.Sandboxctl(kAlice, {"approve", id, "h.txt:1.1"});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    {
      Result done = w.Sandboxctl(kAlice, {"reject", id, "h.txt:1.2", "h.txt:2"});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    {
      Result done = w.Sandboxctl(kAlice, {"reject", id, "d1", "d3/sub"});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    {
      Result done = w.Sandboxctl(kAlice, {"approve", id, "d0/n7", "d0/f7"});
      ASSERT_EQ(done.status, 0) << done.err;
    }
    pending_changes = w.Sandboxctl(kAlice, {"changes", id}).out;
  };
  std::string project, id, all_changes;
  prepare(project, id, all_changes);
  auto moving = TimeMovingPart(site, id, {"commit", id, "--all"});
  ASSERT_EQ(Snapshot(project), after);
  const std::string left_changes = w.Sandboxctl(kAlice, {"changes", id}).out;
  ASSERT_NE(left_changes, "");
  ASSERT_EQ(left_changes.find("[rejected]\n") == std::string::npos, false) << left_changes;
  ASSERT_NE(left_changes.find("M h.txt [rejected]\n"), std::string::npos) << left_changes;
  {
    Result done = w.Sandboxctl(kAlice, {"destroy", id});
    ASSERT_EQ(done.status, 0) << done.err;
  }

  const size_t log_start = w.DaemonLog().size();
  int before_count = 0, after_count = 0;
  for (double fraction : KillFractions({0.0, 0.3, 0.6, 0.9})) {
    SCOPED_TRACE("killed at " + std::to_string(fraction) + " of a partial commit");
    std::string pending;
    prepare(project, id, pending);
    ASSERT_EQ(pending, all_changes);
    KillDuringCommit(w, site, id, {"commit", id, "--all"}, moving, fraction);

    auto live = Snapshot(project);
    bool is_before = live == before, is_after = live == after;
    ASSERT_TRUE(is_before || is_after) << "live tree is neither before nor after the commit: " << DescribeMismatch(live, before, after);
    before_count += is_before;
    after_count += is_after;
    Result changes = w.Sandboxctl(kAlice, {"changes", id});
    ASSERT_EQ(changes.status, 0) << changes.err;
    if (is_after) {
      EXPECT_EQ(changes.out, left_changes) << DescribeLineDifference(changes.out, left_changes);
      ExpectNoStaleConflict(w, id, project);
    } else {
      ExpectDecisionsKept(changes.out);
      // Cut off before it went live: every change is back in the sandbox (pending ones may
      // have been approved already: the commit approves them first).
      EXPECT_EQ(WithoutApprovedMarks(changes.out), WithoutApprovedMarks(all_changes))
          << DescribeLineDifference(WithoutApprovedMarks(changes.out), WithoutApprovedMarks(all_changes));
      {
        Result done = w.Sandboxctl(kAlice, {"commit", id, "--all"});
        ASSERT_EQ(done.status, 0) << done.err;
      }
      EXPECT_EQ(Snapshot(project), after);
      const std::string left = w.Sandboxctl(kAlice, {"changes", id}).out;
      EXPECT_EQ(left, left_changes) << DescribeLineDifference(left, left_changes);
    }
    {
      Result done = w.Sandboxctl(kAlice, {"destroy", id});
      ASSERT_EQ(done.status, 0) << done.err;
    }
  }
  EXPECT_NE(w.DaemonLog().find("was cut off", log_start), std::string::npos) << "no kill interrupted a partial commit";
  w.RunAs(kAlice, {"rm", "-rf", reference, project});
  std::printf("partial crash test: %d kills left the tree before the commit, %d after it; recovered: %s\n", before_count,
              after_count, Recoveries(log_start).c_str());
}

// The same with part of the change set rejected: the commit goes through a stage, and a kill at
// any instant must leave the live tree before or after it and the sandbox holding exactly what
// was not committed (nothing lost from the stage).
TEST(CommitCrashTest, KilledDaemonDuringAPartialCommit) {
  SANDBOXD_REQUIRE_WORLD();
  KillPartialCommits(Home());
}

TEST(CommitCrashTest, KilledDaemonDuringAPartialCommitThroughALandingArea) {
  SANDBOXD_REQUIRE_WORLD();
  OtherFileSystem fs("1777");
  if (!fs.error().empty()) GTEST_SKIP() << fs.error();
  KillPartialCommits({fs.home(), ""});
}

}  // namespace
}  // namespace sandboxd::it
