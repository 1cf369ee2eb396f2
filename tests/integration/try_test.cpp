// `sandboxctl try`, the one-shot cycle, as unprivileged users: -y commits, -n and no terminal
// keep, the command's status passes through, a refused commit keeps everything, and on a
// terminal the question is asked and answered (through a pseudo-terminal of our own).

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "harness.h"

namespace sandboxd::it {
namespace {

/// Each test starts from a fresh project of alice's and notes what try must leave as it was:
/// the live tree (unless committed) and the list of her sandboxes (unless one is kept).
class TryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    before_ = Snapshot(project_);
    ids_ = SandboxIds(kAlice);
  }
  /// `sandboxctl try ARGS...` as `user` in the project (bob has one of his own).
  Result Try(const std::vector<std::string>& args, const std::string& user = kAlice, const std::string& cwd = "") {
    std::vector<std::string> argv = {"try"};
    argv.insert(argv.end(), args.begin(), args.end());
    return World().Sandboxctl(user, argv, {.cwd = cwd.empty() ? project_ : cwd});
  }
  std::string project_;
  std::map<std::string, std::string> before_;
  std::set<std::string> ids_;
};

TEST_F(TryTest, YesCommitsWhatTheCommandWroteAndDestroysTheSandbox) {
  Result r = Try({"-y", "--", "sh", "-c", "echo made > made.txt; rm c.txt; echo out"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out\n") << "stdout is the command's alone";
  EXPECT_TRUE(Contains(r.err, "D c.txt\n") && Contains(r.err, "A made.txt\n")) << r.err;
  auto after = Snapshot(project_);
  ASSERT_TRUE(after.count("/made.txt")) << Describe(after);
  EXPECT_TRUE(Contains(after["/made.txt"], " made\n")) << after["/made.txt"];
  auto expected = before_;
  expected["/made.txt"] = after["/made.txt"];
  expected.erase("/c.txt");
  EXPECT_EQ(after, expected) << Describe(after);
  EXPECT_EQ(SandboxIds(kAlice), ids_) << "the sandbox outlived try -y";
}

TEST_F(TryTest, NoKeepsTheSandboxAndPrintsItsId) {
  // A relative --root, taken from the cwd; the job starts where the caller is.
  Result r = Try({"--root", "..", "-n", "--", "sh", "-c", "pwd; echo two > s2.txt"}, kAlice, project_ + "/sub");
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(r.out.rfind(project_ + "/sub\n", 0), 0u) << r.out;
  std::string id = Trim(r.out.substr(project_.size() + 5));
  ASSERT_FALSE(id.empty()) << r.out;
  EXPECT_TRUE(Contains(r.err, "A sub/s2.txt\n")) << r.err;
  Result show = World().Sandboxctl(kAlice, {"--json", "show", id});
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_EQ(nlohmann::json::parse(show.out)["roots"], nlohmann::json::array({project_}));
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", id}).out, "A sub/s2.txt\n");
  EXPECT_EQ(Snapshot(project_), before_) << "-n touched the live tree";
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST_F(TryTest, TheCommandsStatusPassesThrough) {
  Result exited = Try({"-y", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(exited.status, 7) << exited.err;
  EXPECT_EQ(exited.err.rfind("no changes\n", 0), 0u) << exited.err;
  Result killed = Try({"-y", "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(killed.status, 128 + SIGTERM) << killed.err;
  EXPECT_EQ(SandboxIds(kAlice), ids_) << "try left a sandbox behind";
  EXPECT_EQ(Snapshot(project_), before_);
}

TEST_F(TryTest, WithoutTerminalOrFlagKeepsTheSandbox) {
  Result r = Try({"--", "sh", "-c", "echo z > z; exit 3"});
  EXPECT_EQ(r.status, 3) << r.err;
  std::string id = Trim(r.out);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_TRUE(Contains(r.err, "A z\n")) << r.err;
  EXPECT_TRUE(Contains(r.err, "Kept sandbox " + id)) << r.err;
  EXPECT_TRUE(Contains(r.err, "sandboxctl destroy " + id)) << r.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"show", id}).status, 0);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", id}).out, "A z\n");
  EXPECT_EQ(Snapshot(project_), before_);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST_F(TryTest, BadUsageExitsTwoAndCreatesNothing) {
  EXPECT_EQ(Try({"-y", "-n", "--", "true"}).status, 2);
  EXPECT_EQ(Try({"-y"}).status, 2);
  EXPECT_EQ(Try({"-y", "--"}).status, 2);
  EXPECT_EQ(SandboxIds(kAlice), ids_);
}

// A refused commit keeps everything, says why, and try still exits with the command's status,
// as documented (a script learns of the command, and reads of the commit on stderr).
TEST_F(TryTest, CommitRefusedByPolkitKeepsEverythingAndExitsWithTheCommandsStatus) {
  std::string project = World().MakeProject(kBob);  // the test rules refuse bob every commit
  auto before = Snapshot(project);
  Result r = Try({"-y", "--", "sh", "-c", "echo more >> a.txt"}, kBob, project);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "sandboxctl: the commit was refused: ")) << r.err;
  EXPECT_TRUE(Contains(r.err, "not authorized")) << r.err;
  std::string id = Trim(r.out);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_TRUE(Contains(r.err, "Kept sandbox " + id)) << r.err;
  EXPECT_EQ(World().Sandboxctl(kBob, {"changes", id}).out, "M a.txt\n");
  EXPECT_EQ(Snapshot(project), before);
  EXPECT_EQ(World().Sandboxctl(kBob, {"destroy", id}).status, 0);
}

/// What a person sees and types: `sandboxctl try ARGS` as `user` in `cwd` on a pseudo-terminal.
/// Each step waits until `wait_for` has appeared `times` times in the output, then types `keys`.
struct Keystrokes {
  std::string wait_for;
  size_t times;
  std::string keys;
};

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

Result TryOnTerminal(const std::string& user, const std::string& cwd, const std::vector<std::string>& args,
                     const std::vector<Keystrokes>& steps) {
  passwd* pw = getpwnam(user.c_str());
  std::vector<std::string> env = {"HOME=" + std::string(pw->pw_dir), "USER=" + user, "PATH=/usr/bin:/bin",
                                  "DBUS_SYSTEM_BUS_ADDRESS=" + World().bus_address(), "LANG=C.UTF-8", "TERM=dumb"};
  std::vector<std::string> argv = {SANDBOXCTL_BIN, "--no-ask-password", "try"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> envp, argp;
  for (auto& e : env) envp.push_back(e.data());
  for (auto& a : argv) argp.push_back(a.data());
  envp.push_back(nullptr);
  argp.push_back(nullptr);
  int master = -1, slave = -1;
  Result result;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return result;
  pid_t pid = fork();
  if (pid == 0) {
    // A session of its own whose controlling terminal is the pty: Ctrl-C reaches sandboxctl.
    setsid();
    ioctl(slave, TIOCSCTTY, 0);
    for (int fd = 0; fd < 3; ++fd) dup2(slave, fd);
    if (initgroups(user.c_str(), pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(125);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execve(argp[0], argp.data(), envp.data());
    _exit(127);
  }
  close(slave);
  size_t next = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    if (next < steps.size() && Count(result.out, steps[next].wait_for) >= steps[next].times) {
      EXPECT_EQ(write(master, steps[next].keys.data(), steps[next].keys.size()), static_cast<ssize_t>(steps[next].keys.size()));
      ++next;
    }
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t got = read(master, buf, sizeof buf);
    if (got <= 0) break;  // EIO once every holder of the terminal has gone
    result.out.append(buf, static_cast<size_t>(got));
  }
  EXPECT_EQ(next, steps.size()) << "never saw what to answer; the terminal showed:\n" << result.out;
  if (std::chrono::steady_clock::now() >= deadline) {
    ADD_FAILURE() << "timed out; the terminal showed:\n" << result.out;
    kill(pid, SIGKILL);
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

constexpr const char* kQuestion = "[c]ommit all, [d]iscard, [k]eep? ";

TEST_F(TryTest, OnATerminalCommitIsAnAnswer) {
  Result r = TryOnTerminal(kAlice, project_, {"--", "sh", "-c", "echo yes > answered.txt"}, {{kQuestion, 1, "c\n"}});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "A answered.txt")) << r.out;
  EXPECT_TRUE(Snapshot(project_).count("/answered.txt")) << r.out;
  EXPECT_EQ(SandboxIds(kAlice), ids_);
}

TEST_F(TryTest, OnATerminalDiscardAfterAWrongAnswer) {
  Result r = TryOnTerminal(kAlice, project_, {"--", "sh", "-c", "echo no > refused.txt; exit 5"},
                           {{kQuestion, 1, "maybe\n"}, {kQuestion, 2, "d\n"}});
  EXPECT_EQ(r.status, 5) << r.out;
  EXPECT_EQ(Count(r.out, kQuestion), 2u) << r.out;
  EXPECT_EQ(Snapshot(project_), before_);
  EXPECT_EQ(SandboxIds(kAlice), ids_);
}

TEST_F(TryTest, CtrlCCancelsTheCommandAndYesThenAsksFirst) {
  Result r = TryOnTerminal(kAlice, project_, {"-y", "--", "sh", "-c", "echo half > half.txt; echo started; sleep 60"},
                           {{"started", 1, "\x03"}, {kQuestion, 1, "d\n"}});
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "A half.txt")) << r.out;
  EXPECT_EQ(Snapshot(project_), before_) << "a cancelled command's changes were committed";
  EXPECT_EQ(SandboxIds(kAlice), ids_);
}

// -y agrees to the changes of a command that works: a failing command's are kept to look at,
// and its id printed. (The command needs no "--": everything from its first word is its own.)
TEST_F(TryTest, YesKeepsWhatAFailingCommandMade) {
  Result r = Try({"-y", "sh", "-c", "echo f > failed.txt; exit 4"});
  EXPECT_EQ(r.status, 4) << r.err;
  std::string id = Trim(r.out);
  ASSERT_FALSE(id.empty()) << r.err;
  EXPECT_TRUE(Contains(r.err, "The command failed (status 4); its changes are kept, not committed.")) << r.err;
  EXPECT_TRUE(Contains(r.err, "Kept sandbox " + id)) << r.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", id}).out, "A failed.txt\n");
  EXPECT_EQ(Snapshot(project_), before_) << "a failing command's changes were committed";
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// A second try where a kept sandbox covers the directory says so: without a terminal it names
// both ways on; on one it offers them, and reusing the kept sandbox carries its changes on.
TEST_F(TryTest, ASecondTryWhereAKeptSandboxIsOffersToReuseOrDropIt) {
  Result first = Try({"-n", "sh", "-c", "echo one > one.txt"});
  std::string kept = Trim(first.out);
  ASSERT_EQ(first.status, 0) << first.err;
  // That try made it is kept in the store: a restart does not make it someone else's.
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  Result refused = Try({"-y", "true"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_TRUE(Contains(refused.err, "the sandbox " + kept + " that an earlier try kept covers this directory already: reuse it (sandboxctl try --sandbox " +
                                        kept + " -- CMD) or drop it (sandboxctl destroy " + kept + ")"))
      << refused.err;
  Result reused = TryOnTerminal(kAlice, project_, {"-y", "sh", "-c", "echo two > two.txt"}, {{"[r]euse it", 1, "r\n"}});
  EXPECT_EQ(reused.status, 0) << reused.out;
  auto after = Snapshot(project_);
  EXPECT_TRUE(after.count("/one.txt") && after.count("/two.txt")) << reused.out;
  EXPECT_EQ(SandboxIds(kAlice), ids_) << "the reused sandbox was committed whole and went";
}

// After a review that rejected what was left, try offers to drop it with the sandbox.
TEST_F(TryTest, RejectedChangesAreOfferedToBeDropped) {
  Result r = TryOnTerminal(kAlice, project_, {"sh", "-c", "echo no > unwanted.txt"},
                           {{kQuestion, 1, "r\n"}, {"Approve this change", 1, "n"}, {"rejected change(s) with the sandbox?", 1, "y\n"}});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(Snapshot(project_), before_);
  EXPECT_EQ(SandboxIds(kAlice), ids_) << "the sandbox holding only rejected changes was kept:\n" << r.out;
}

// try never touches a sandbox it did not make: a named one over the directory, with its
// decisions and a commit to undo, is named in a refusal that says how to run in it (never how
// to destroy it), with or without a terminal, and is left exactly as it was.
TEST_F(TryTest, ANamedSandboxOverTheDirectoryIsNamedNeverOfferedToBeDropped) {
  Result made = World().Sandboxctl(kAlice, {"create", "--name", "work", project_});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string work = Trim(made.out);
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", "work", "--", "sh", "-c", "echo kept > kept.txt; echo done > done.txt"}).status, 0);
  ASSERT_EQ(World().Sandboxctl(kAlice, {"approve", "work", "kept.txt"}).status, 0);

  Result refused = Try({"-y", "true"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_TRUE(Contains(refused.err, "your sandbox work (" + work + ") covers this directory already")) << refused.err;
  EXPECT_TRUE(Contains(refused.err, "sandboxctl run work -- CMD")) << refused.err;
  EXPECT_FALSE(Contains(refused.err, "destroy")) << refused.err;
  Result on_terminal = TryOnTerminal(kAlice, project_, {"sh", "-c", "echo x > x.txt"}, {});
  EXPECT_EQ(on_terminal.status, 1) << on_terminal.out;
  EXPECT_FALSE(Contains(on_terminal.out, "[d]rop")) << on_terminal.out;
  EXPECT_TRUE(Contains(on_terminal.out, "sandboxctl run work -- CMD")) << on_terminal.out;

  Result changes = World().Sandboxctl(kAlice, {"changes", "work"});
  EXPECT_EQ(changes.out, "A done.txt\nA kept.txt [approved]\n") << changes.err;
  EXPECT_EQ(Snapshot(project_), before_);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", "work"}).status, 0);
}

// A sandbox an earlier try kept over another directory (a subdirectory) is not "yours to
// reuse" here: reusing it would run the command in that directory, not in this one.
TEST_F(TryTest, ASandboxTryKeptForAnotherDirectoryIsNotReused) {
  Result first = Try({"-n", "sh", "-c", "echo one > one.txt"}, kAlice, project_ + "/sub");
  ASSERT_EQ(first.status, 0) << first.err;
  std::string kept = Trim(first.out);
  Result refused = TryOnTerminal(kAlice, project_, {"-y", "sh", "-c", "pwd > where.txt"}, {});
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_FALSE(Contains(refused.out, "[r]euse it")) << refused.out;
  EXPECT_TRUE(Contains(refused.out, "covers this directory already (its roots: " + project_ + "/sub)")) << refused.out;
  EXPECT_EQ(Snapshot(project_), before_);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", kept}).out, "A one.txt\n");
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", kept}).status, 0);
}

// try --sandbox NAME runs in a sandbox of the caller's, in the current directory, with run's
// options; -y commits there, and the sandbox stays (try did not make it).
TEST_F(TryTest, SandboxRunsInANamedSandboxWithRunsOptionsAndKeepsIt) {
  Result made = World().Sandboxctl(kAlice, {"create", "--name", "scripted", project_});
  ASSERT_EQ(made.status, 0) << made.err;
  Result r = Try({"--sandbox", "scripted", "-y", "--env", "GREETING=hi", "--", "sh", "-c", "pwd; echo $GREETING > greeting.txt"}, kAlice,
                 project_ + "/sub");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, project_ + "/sub\n") << "the command ran elsewhere than the current directory";
  auto after = Snapshot(project_);
  ASSERT_TRUE(after.count("/sub/greeting.txt")) << Describe(after);
  EXPECT_TRUE(Contains(after["/sub/greeting.txt"], " hi\n")) << after["/sub/greeting.txt"];
  EXPECT_EQ(World().Sandboxctl(kAlice, {"show", "scripted"}).status, 0) << "try destroyed a sandbox it did not make";

  Result kept = Try({"--sandbox", "scripted", "--timeout", "1", "--", "sh", "-c", "echo late > late.txt; sleep 30"});
  EXPECT_EQ(kept.status, 137) << kept.err;  // killed by its timeout (SIGKILL)
  EXPECT_TRUE(Contains(kept.err, "What the command changed stays in sandbox scripted.")) << kept.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"changes", "scripted"}).out, "A late.txt\n");
  EXPECT_EQ(Try({"--sandbox", "scripted", "--root", project_, "true"}).status, 2);
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", "scripted"}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
