// User mode end to end, as an unprivileged user with nothing of root's: a private session bus
// of alice's, `sandboxd --user` run as alice, and `sandboxctl --user`. The overlay lives only
// in each job's own namespaces (no merged view on the host); the change set, diff, hunk
// approval, commit and undo work as on the system bus.

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

class UserModeTest : public ::testing::Test {
 protected:
  /// A private session bus of alice's (its activation directory in XDG_DATA_DIRS, empty
  /// unless a test writes there) and, unless `activated`, sandboxd --user started by hand.
  void StartUserWorld(bool activated) {
    Harness& w = World();
    dir_ = w.dir() + (activated ? "/user-mode-activated" : "/user-mode");
    std::filesystem::create_directories(dir_ + "/share/dbus-1/services");
    w.RunAs("root", {"chown", "-R", kAlice, dir_});
    bus_ = "unix:path=" + dir_ + "/bus";
    // The state in alice's home, as by default: under /tmp a job would not see it anyway.
    state_ = std::string(getpwnam(kAlice)->pw_dir) + "/it-user-state-" + std::to_string(getpid()) + (activated ? "-a" : "");
    env_ = {"DBUS_SESSION_BUS_ADDRESS=" + bus_, "XDG_RUNTIME_DIR=" + dir_ + "/runtime", "XDG_STATE_HOME=" + state_,
            "XDG_CONFIG_HOME=" + dir_ + "/config", "XDG_DATA_DIRS=" + dir_ + "/share", std::string("SANDBOXD_HELPER=") + SANDBOXD_HELPER_BIN};
    // As alice, left running in the background (setsid: not waited for by RunAs).
    std::string script = "mkdir -p -m 700 \"$XDG_RUNTIME_DIR\" && dbus-daemon --session --address=" + bus_ +
                         " --fork --print-pid >" + dir_ + "/bus.pid";
    if (!activated)
      script += " && { setsid " + std::string(SANDBOXD_BIN) + " --user --log-level debug </dev/null >>" + dir_ +
                "/sandboxd.log 2>&1 & echo $! >" + dir_ + "/sandboxd.pid; }";
    Result started = w.RunAs(kAlice, {"sh", "-c", script}, {.extra_env = env_});
    ASSERT_EQ(started.status, 0) << started.err;
    if (!activated) ASSERT_TRUE(WaitUntil([&] { return Ctl({"list"}).status == 0; }, 20s)) << Log();
  }
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    if (!IsActivationTest()) StartUserWorld(false);
  }
  static bool IsActivationTest() {
    return std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()).find("Activat") != std::string::npos;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    for (const char* pidfile : {"/sandboxd.pid", "/bus.pid"}) {
      std::string pid = Trim(ReadWhole(dir_ + pidfile));
      if (!pid.empty()) kill(std::stoi(pid), SIGTERM);
    }
    // A daemon the bus started has no pid file; it is alice's and runs on this state only.
    World().RunAs("root", {"pkill", "-f", "--", "--user --idle-exit 2 --state-dir " + dir_});
    // Once the daemon is gone (nothing of it may be mid-write): its state lock is free then.
    World().RunAs("root", {"flock", "-w", "10", state_ + "/sandboxd/lock", "true"});
    World().RunAs("root", {"rm", "-rf", "--one-file-system", state_});
  }
  static uid_t Uid() { return getpwnam(kAlice)->pw_uid; }
  static gid_t Gid() { return getpwnam(kAlice)->pw_gid; }
  Result Ctl(std::vector<std::string> args) const {
    args.insert(args.begin(), "--user");
    return World().Sandboxctl(kAlice, args, {.extra_env = env_});
  }
  std::string Log() const { return ReadWhole(dir_ + "/sandboxd.log"); }

  std::string dir_, bus_, state_;
  std::vector<std::string> env_;
};

TEST_F(UserModeTest, ChangesDiffHunkApprovalCommitAndUndoWorkAsOnTheSystemBus) {
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  WriteWhole(project + "/three.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n");
  WriteWhole(project + "/sub/gone.txt", "bye\n");
  w.RunAs("root", {"chown", "-R", kAlice + std::string(":") + kAlice, project});
  const auto before = Snapshot(project);

  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err << Log();
  std::string id = Trim(created.out);
  EXPECT_NE(Log().find("ready on the session bus"), std::string::npos);
  EXPECT_TRUE(WaitUntil([&] { return Log().find("user mode: overlayfs in a user namespace and jobs work here") != std::string::npos; }))
      << Log();

  Result job = Ctl({"run", id, "--", "sh", "-c",
                    "sed -i -e 's/^2$/two/' -e 's/^10$/ten/' -e 's/^19$/nineteen/' three.txt && echo new > new.txt && "
                    "rm -r sub && mkdir sub && echo fresh > sub/fresh.txt && id -u && ls -A \"$0\" 2>&1 | wc -l",
                    state_ + "/sandboxd"});
  ASSERT_EQ(job.status, 0) << job.err << Log();
  EXPECT_EQ(job.out.substr(0, job.out.find('\n')), std::to_string(Uid())) << "the job runs as alice";
  // sandboxd's state (every sandbox's pending changes, the database) is the user's in user
  // mode, yet no job sees into it.
  EXPECT_EQ(job.out.substr(job.out.find('\n') + 1), "1\n") << "the state directory is not hidden from the job: " << job.out;
  // No merged view on the host: the overlay exists only in the job's namespaces.
  EXPECT_EQ(ReadWhole("/proc/self/mountinfo").find(project), std::string::npos) << "an overlay of the project is mounted on the host";
  EXPECT_EQ(Snapshot(project), before) << "the live tree changed before a commit";

  EXPECT_EQ(Ctl({"changes", id}).out, "A new.txt\nA sub/fresh.txt\nD sub/gone.txt\nD sub/s.txt\nM three.txt\n");
  Result diff = Ctl({"diff", id, "three.txt"});
  EXPECT_NE(diff.out.find("+ten"), std::string::npos) << diff.out;
  ASSERT_EQ(Ctl({"approve", id, "three.txt:2", "new.txt"}).status, 0);
  Result commit = Ctl({"commit", id});
  ASSERT_EQ(commit.status, 0) << commit.err << Log();
  EXPECT_EQ(ReadWhole(project + "/three.txt"), "1\n2\n3\n4\n5\n6\n7\n8\n9\nten\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n");
  EXPECT_EQ(ReadWhole(project + "/new.txt"), "new\n");
  EXPECT_EQ(ReadWhole(project + "/sub/gone.txt"), "bye\n") << "an unapproved deletion went live";
  // What is left is exactly what was not approved.
  Result left = Ctl({"diff", id, "three.txt"});
  EXPECT_NE(left.out.find("+two"), std::string::npos) << left.out;
  EXPECT_EQ(left.out.find("+ten"), std::string::npos) << left.out;

  // The rest, the replaced directory included, then undo twice: byte for byte as before.
  ASSERT_EQ(Ctl({"commit", id, "--all"}).status, 0) << Log();
  EXPECT_FALSE(std::filesystem::exists(project + "/sub/gone.txt"));
  EXPECT_EQ(ReadWhole(project + "/sub/fresh.txt"), "fresh\n");
  ASSERT_EQ(Ctl({"undo", id}).status, 0) << Log();
  ASSERT_EQ(Ctl({"undo", id}).status, 0) << Log();
  EXPECT_EQ(Snapshot(project), before) << Describe(Snapshot(project));

  ASSERT_EQ(Ctl({"destroy", id}).status, 0);
  EXPECT_EQ(Ctl({"list"}).out.find(id), std::string::npos);
}

// The live feed in user mode: the overlay is the job's own (no merged view on the host), and
// the feed follows the upper layer all the same; a listener of alice's on her session bus hears
// the job's file named while the job still runs.
TEST_F(UserModeTest, TheLiveFeedFollowsAJobsOwnOverlay) {
  Harness& w = World();
  std::string project = w.MakeProject(kAlice);
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err << Log();
  std::string id = Trim(created.out);
  const std::string heard = dir_ + "/feed-monitor.log";
  Result monitor = w.RunAs(kAlice, {"sh", "-c", "setsid gdbus monitor --session --dest org.sandboxd.Sandbox1 >" + heard +
                                                    " 2>&1 </dev/null & echo $! >" + dir_ + "/monitor.pid"},
                           {.extra_env = env_});
  ASSERT_EQ(monitor.status, 0) << monitor.err;
  struct StopMonitor {
    std::string pidfile;
    ~StopMonitor() {
      std::string pid = Trim(ReadWhole(pidfile));
      if (!pid.empty()) kill(std::stoi(pid), SIGTERM);
    }
  } stop{dir_ + "/monitor.pid"};
  ASSERT_TRUE(WaitUntil([&] { return ReadWhole(heard).find("is owned by") != std::string::npos; }, 20s)) << ReadWhole(heard);
  Result job = Ctl({"run", id, "sh", "-c", "echo live > live.txt; sleep 2; echo late > late.txt"});
  ASSERT_EQ(job.status, 0) << job.err << Log();
  // The last announcement was sent before the job's end; the listener may write it a moment later.
  EXPECT_TRUE(WaitUntil([&] { return ReadWhole(heard).find("'late.txt', 'added'") != std::string::npos; }, 10s)) << ReadWhole(heard);
  std::string text = ReadWhole(heard);
  size_t live = text.find("'live.txt', 'added'");
  size_t late = text.find("'late.txt', 'added'");
  EXPECT_NE(live, std::string::npos) << text;
  EXPECT_NE(late, std::string::npos) << text;
  // Heard in two announcements: the first while the job slept.
  EXPECT_NE(text.substr(0, late).find("ChangesSeen"), text.rfind("ChangesSeen", late)) << text;
  ASSERT_EQ(Ctl({"destroy", id}).status, 0);
}

// A root whose group is not one of the user's (a shared project directory, say): the upper's
// root cannot take that group (chown to a group one is not in is refused), and create failed
// ("cannot chown ... upper/0"). Inside the job's user namespace that group is unmapped anyway.
TEST_F(UserModeTest, ARootWhoseGroupIsNotOneOfTheUsersIsSandboxedToo) {
  const char* kOtherGroup = "sbxtest-other";
  if (getgrnam(kOtherGroup) == nullptr) ASSERT_EQ(World().RunAs("root", {"groupadd", kOtherGroup}).status, 0);
  std::string project = World().MakeProject(kAlice);
  ASSERT_EQ(World().RunAs("root", {"chgrp", kOtherGroup, project}).status, 0);
  Result created = Ctl({"create", project});
  ASSERT_EQ(created.status, 0) << created.err << Log();
  std::string id = Trim(created.out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "echo changed > a.txt"}).status, 0) << Log();
  EXPECT_EQ(Ctl({"changes", id}).out, "M a.txt\n");
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// The session activation file as meson installs it (dbus/session/), pointing at the built
// daemon: the first call starts sandboxd --user, --idle-exit ends it, the next call starts it
// again with the sandbox and its changes intact.
TEST_F(UserModeTest, ActivationOnTheSessionBusStartsItAndIdleExitEndsIt) {
  StartUserWorld(true);
  std::string activation = ReadWhole(std::string(SANDBOXD_SOURCE_DIR) + "/dbus/session/org.sandboxd.Sandbox1.service.in");
  const std::string exec = "@sbindir@/sandboxd --user --idle-exit 600";
  ASSERT_NE(activation.find(exec), std::string::npos) << activation;
  activation.replace(activation.find(exec), exec.size(),
                     std::string("/bin/sh -c 'exec ") + SANDBOXD_BIN + " --user --idle-exit 2 --state-dir " + dir_ + "/state >>" + dir_ +
                         "/sandboxd.log 2>&1'");
  WriteWhole(dir_ + "/share/dbus-1/services/org.sandboxd.Sandbox1.service", activation);
  World().RunAs(kAlice, {"gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                         "--method", "org.freedesktop.DBus.ReloadConfig"},
                {.extra_env = env_});

  std::string project = World().MakeProject(kAlice);
  Result created = Ctl({"create", "--name", "woken", project});
  ASSERT_EQ(created.status, 0) << created.err << Log();
  ASSERT_EQ(Ctl({"run", "woken", "--", "sh", "-c", "echo changed > a.txt"}).status, 0) << Log();
  auto exits = [&] {
    size_t count = 0;
    for (size_t at = Log().find("idle for 2 s: exiting"); at != std::string::npos; at = Log().find("idle for 2 s: exiting", at + 1)) ++count;
    return count;
  };
  EXPECT_TRUE(WaitUntil([&] { return exits() == 1; }, 15s)) << Log();
  Result changes = Ctl({"changes", "woken"});
  EXPECT_EQ(changes.out, "M a.txt\n") << changes.err << Log();
  EXPECT_TRUE(WaitUntil([&] { return exits() == 2; }, 15s)) << Log();
  EXPECT_EQ(Ctl({"destroy", "woken"}).status, 0);
}

TEST(UserModeStartTest, WithoutASessionBusSandboxctlSaysWhichBusItLookedFor) {
  SANDBOXD_REQUIRE_WORLD();
  Result refused = World().Sandboxctl(kAlice, {"--user", "list"}, {.extra_env = {"XDG_RUNTIME_DIR=/nonexistent"}});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("cannot connect to the session bus"), std::string::npos) << refused.err;
}

// Started without XDG_RUNTIME_DIR (a bus whose activation environment lacks it): the login
// manager's /run/user/UID serves when it is the user's own and closed to others; else the
// refusal says what to set. It died with status 2 either way.
TEST(UserModeStartTest, WithoutXdgRuntimeDirItUsesTheLoginRuntimeDirectoryOrSaysWhatToSet) {
  SANDBOXD_REQUIRE_WORLD();
  const std::string uid = std::to_string(getpwnam(kAlice)->pw_uid);
  const std::string runtime = "/run/user/" + uid;
  const std::string state = World().dir() + "/user-mode-no-runtime";
  struct stat st;
  const bool made = lstat(runtime.c_str(), &st) != 0;
  if (made) ASSERT_EQ(World().RunAs("root", {"install", "-d", "-m", "700", "-o", kAlice, runtime}).status, 0);
  World().RunAs("root", {"install", "-d", "-o", kAlice, state});
  // No bus to serve (none at this address): started, it says how far it got, and gives up.
  const std::vector<std::string> start = {"env", "-u", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS=unix:path=" + state + "/no-bus",
                                          SANDBOXD_BIN, "--user", "--state-dir", state + "/state"};
  Result found = World().RunAs(kAlice, start);
  EXPECT_EQ(found.err.find("needs a runtime directory"), std::string::npos) << found.err;
  EXPECT_TRUE(std::filesystem::exists(runtime + "/sandboxd")) << found.err;
  World().RunAs("root", {"chmod", "755", runtime});  // open to others: not used
  Result refused = World().RunAs(kAlice, start);
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("set XDG_RUNTIME_DIR (for D-Bus activation: dbus-update-activation-environment XDG_RUNTIME_DIR)"),
            std::string::npos) << refused.err;
  if (made) World().RunAs("root", {"rm", "-rf", runtime});
  else World().RunAs("root", {"chmod", "700", runtime});
  World().RunAs("root", {"rm", "-rf", state});
}

TEST(UserModeStartTest, RootIsToldUserModeIsForUsers) {
  SANDBOXD_REQUIRE_WORLD();
  Result refused = World().RunAs("root", {SANDBOXD_BIN, "--user"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("sandboxd --user runs as the user whose sandboxes it keeps, not as root"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace sandboxd::it
