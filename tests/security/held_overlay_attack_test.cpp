// Issue 40, defect 1: another user's job breaks my commit, and the exit status lies. Every
// mount namespace made after a sandbox was mounted (another user's job, in his own sandbox;
// root's `unshare -m`) used to copy that sandbox's overlay, and the copy kept its layers in use:
// the remount that ends a partial commit or an undo was refused ("cannot mount root ... the
// layers ... are still in use by an earlier mount of them; try again"), the verb exited 1 although
// the live tree had changed, and the log had no "committed" or "undone" line. Each test holds
// such a namespace while alice commits one hunk and undoes it: both must succeed, the live tree
// and her sandbox's view must be right, and the log must say what happened.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "attack_tools.h"
#include "numbered_lines.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// Whether a process of `user` runs exactly `command` (its whole command line).
bool Runs(const std::string& user, const std::string& command) {
  return World().RunAs("root", {"pgrep", "-u", user, "-f", "^" + command + "$"}).status == 0;
}

/// The processes of `user` whose mount namespace has a mount that names sandbox `id` (its
/// merged view, or an overlay over its layers), one "pid: line" each.
std::string MountsNaming(const std::string& user, const std::string& id) {
  Result pids = World().RunAs("root", {"pgrep", "-u", user});
  std::istringstream in(pids.out);
  std::string found;
  for (std::string pid; in >> pid;) {
    std::istringstream mounts(ReadWhole("/proc/" + pid + "/mountinfo"));
    for (std::string line; std::getline(mounts, line);)
      if (line.find(id) != std::string::npos) found += pid + ": " + line + "\n";
  }
  return found;
}

/// A root process in a mount namespace of its own, made now (`unshare -m`, with `propagation`
/// as unshare(1) takes it; inside the daemon's namespace when `in_daemons`), that sleeps until
/// killed: it holds a copy of every mount it saw.
class RootNamespaceHolder {
 public:
  RootNamespaceHolder(const std::string& propagation, bool in_daemons = false) {
    Start({"unshare", "-m", "--propagation=" + propagation, "sleep", "307"}, in_daemons);
  }
  /// Or `user`'s own (an unprivileged user namespace with a mount namespace in it, as any user
  /// may make on Debian: `unshare -Urm`), made now.
  struct OfUser {
    const char* name;
  };
  explicit RootNamespaceHolder(OfUser user) {
    Start({"setpriv", std::string("--reuid=") + user.name, std::string("--regid=") + user.name, "--init-groups", "unshare", "-Urm", "sleep", "307"},
          false);
  }
  void Start(std::vector<std::string> argv, bool in_daemons) {
    if (in_daemons) argv.insert(argv.begin(), {"nsenter", "-t", std::to_string(World().daemon_pid()), "-m"});
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      execvp(args[0], args.data());
      _exit(127);
    }
  }
  ~RootNamespaceHolder() { Stop(); }
  RootNamespaceHolder(const RootNamespaceHolder&) = delete;
  RootNamespaceHolder& operator=(const RootNamespaceHolder&) = delete;
  pid_t pid() const { return pid_; }
  /// Once unshare has made the namespace and exec'd sleep in it.
  bool Holding() const { return ReadWhole("/proc/" + std::to_string(pid_) + "/comm") == "sleep\n"; }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

class HeldOverlayAttackTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    ASSERT_EQ(World().RunAs(kAlice, {"sh", "-c", "cat > three.txt"}, {.input = Lines(), .cwd = project_}).status, 0);
  }

  void TearDown() override {
    if (!bobs_id_.empty()) World().Sandboxctl(kBob, {"destroy", "--cancel-jobs", bobs_id_});
    AliceSandboxTest::TearDown();
  }

  /// Three hunks in alice's sandbox, before anyone holds a namespace: the sandbox stays mounted
  /// as it was when the holder copies the mounts.
  void EditThreeHunks() { Job("sed -i -e 's/^line 2$/two/' -e 's/^line 15$/fifteen/' -e 's/^line 28$/twenty-eight/' three.txt"); }

  /// Bob's job in a sandbox of his own, running `sleep 25`.
  void StartBobsJob() {
    Result made = World().Sandboxctl(kBob, {"create", World().MakeProject(kBob)});
    ASSERT_EQ(made.status, 0) << made.err;
    bobs_id_ = Trim(made.out);
    // Started and left running, its output captured (sandboxctl has no detached run yet).
    Result started = World().Gdbus(kBob, "/org/sandboxd/Sandbox1/sandbox/" + bobs_id_, "org.sandboxd.Sandbox1.Sandbox.Run",
                                   {"['sleep', '25']", "''", "{}", "{}", "{}", "0"});
    ASSERT_EQ(started.status, 0) << started.err;
    // Running means bwrap has made its namespace and the job's program runs in it.
    ASSERT_TRUE(WaitUntil([] { return Runs(kBob, "sleep 25"); })) << "bob's job never ran";
  }

  /// Alice commits hunk 2 alone and undoes that commit, while someone else holds a namespace
  /// made after her sandbox was mounted; `holding` says that it still does.
  void CommitOneHunkAndUndo(const std::function<bool()>& holding) {
    ASSERT_EQ(Ctl({"approve", id_, "three.txt:2"}).status, 0);
    Result commit = Ctl({"commit", id_});
    EXPECT_EQ(commit.status, 0) << commit.err;
    EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{15, "fifteen"}})) << "the live tree is not the commit's";
    EXPECT_NE(World().DaemonLog().find("sandbox " + id_ + ": committed 1 changes"), std::string::npos)
        << "the log does not say the commit happened";
    Result seen = Ctl({"run", id_, "--", "cat", "three.txt"});
    EXPECT_EQ(seen.status, 0) << seen.err;
    EXPECT_EQ(seen.out, Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}})) << "the sandbox's view after the commit";

    Result undo = Ctl({"undo", id_});
    EXPECT_EQ(undo.status, 0) << undo.err;
    EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines()) << "the live tree is not as before the commit";
    EXPECT_NE(World().DaemonLog().find(" undone for uid"), std::string::npos) << "the log does not say the undo happened";
    EXPECT_NE(World().DaemonLog().find("sandbox " + id_ + ": commit "), std::string::npos);
    seen = Ctl({"run", id_, "--", "cat", "three.txt"});
    EXPECT_EQ(seen.out, Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}})) << "the sandbox's view after the undo";

    // A second undo finds nothing to take back: the first one did (and said so).
    EXPECT_EQ(Ctl({"undo", id_}).status, 1);
    EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines());
    EXPECT_TRUE(holding()) << "the namespace was let go before the verbs ran: the attack did not hold";
  }

  std::string bobs_id_;
};

// Bob's job (25 s) started after alice's sandbox was mounted: his bwrap's namespace copied
// the host's mounts, alice's overlay among them.
TEST_F(HeldOverlayAttackTest, AnotherUsersJobDoesNotBreakACommitOrAnUndo) {
  EditThreeHunks();
  StartBobsJob();
  if (HasFatalFailure()) return;
  EXPECT_EQ(MountsNaming(kBob, id_), "") << "bob's job holds alice's overlay";
  CommitOneHunkAndUndo([] { return Runs(kBob, "sleep 25"); });
}

// root's `unshare -m` after alice's sandbox was mounted: its namespace copies every mount,
// unbindable ones too, and keeps them (private: no unmount of the host's ever reaches them).
class RootNamespaceAttackTest : public HeldOverlayAttackTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(RootNamespaceAttackTest, ANamespaceMadeAfterTheMountDoesNotBreakACommitOrAnUndo) {
  EditThreeHunks();
  RootNamespaceHolder holder(GetParam());
  ASSERT_TRUE(WaitUntil([&] { return holder.Holding(); })) << "unshare -m did not start";
  EXPECT_EQ(ReadWhole("/proc/" + std::to_string(holder.pid()) + "/mountinfo").find(id_), std::string::npos)
      << "root's new namespace holds alice's overlay";
  CommitOneHunkAndUndo([&] { return holder.Holding(); });
}

INSTANTIATE_TEST_SUITE_P(Propagation, RootNamespaceAttackTest, ::testing::Values("private", "unchanged", "slave"));

// Bob's own user and mount namespace (`unshare -Urm`, no root needed) made after alice's
// sandbox was mounted: no overlay the host shows could be kept from it, which is why the
// overlays live in sandboxd's own namespace, not on the host.
TEST_F(HeldOverlayAttackTest, AnotherUsersOwnNamespaceDoesNotBreakACommitOrAnUndo) {
  EditThreeHunks();
  RootNamespaceHolder holder(RootNamespaceHolder::OfUser{kBob});
  ASSERT_TRUE(WaitUntil([&] { return holder.Holding(); })) << "bob's unshare -Urm did not start";
  EXPECT_EQ(ReadWhole("/proc/" + std::to_string(holder.pid()) + "/mountinfo").find(id_), std::string::npos)
      << "bob's namespace holds alice's overlay";
  CommitOneHunkAndUndo([&] { return holder.Holding(); });
}

// What no daemon can keep from root: a copy of its own namespace, made by entering it. The
// sandbox cannot be mounted again while that copy lives; the commit and the undo still took
// effect and must say so (exit 0, the log's lines, the commit's note on stderr), and no job may
// run in the bare mount point meanwhile (its writes would land outside the sandbox): it is
// refused, naming the sandbox, until the copy is gone, and then the job mounts the sandbox.
TEST_F(HeldOverlayAttackTest, AVerbThatTookEffectSaysSoWhenItsSandboxCannotBeMountedAgain) {
  EditThreeHunks();
  ASSERT_EQ(Ctl({"approve", id_, "three.txt:2"}).status, 0);
  RootNamespaceHolder holder("private", /*in_daemons=*/true);
  ASSERT_TRUE(WaitUntil([&] { return holder.Holding(); })) << "nsenter + unshare -m did not start";

  Result commit = Ctl({"commit", id_});
  EXPECT_EQ(commit.status, 0) << commit.err;
  EXPECT_NE(commit.err.find("sandbox " + id_ + ": the commit took effect, but the sandbox cannot be mounted again"), std::string::npos)
      << commit.err;
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines({{15, "fifteen"}}));
  EXPECT_NE(World().DaemonLog().find("sandbox " + id_ + ": committed 1 changes"), std::string::npos) << World().DaemonLog();

  Result refused = Ctl({"run", id_, "--", "sh", "-c", "echo lost > lost.txt"});
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.err.find("sandbox " + id_), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(World().dir() + "/run/" + id_ + "/0/lost.txt")) << "a job ran in the bare mount point";

  Result undo = Ctl({"undo", id_});
  EXPECT_EQ(undo.status, 0) << undo.err;
  EXPECT_EQ(ReadWhole(project_ + "/three.txt"), Lines());
  EXPECT_NE(World().DaemonLog().find("sandbox " + id_ + ": the undo took effect, but it cannot be mounted again"), std::string::npos);
  EXPECT_NE(World().DaemonLog().find(" undone for uid"), std::string::npos) << World().DaemonLog();

  EXPECT_TRUE(holder.Holding());
  holder.Stop();
  // The copy goes with its namespace, a moment after its last process.
  Result seen;
  EXPECT_TRUE(WaitUntil([&] { return (seen = Ctl({"run", id_, "--", "cat", "three.txt"})).status == 0; }, 20s)) << seen.err;
  EXPECT_EQ(seen.out, Lines({{2, "two"}, {15, "fifteen"}, {28, "twenty-eight"}}));
  EXPECT_FALSE(std::filesystem::exists(project_ + "/lost.txt"));
}

}  // namespace
}  // namespace sandboxd::it
