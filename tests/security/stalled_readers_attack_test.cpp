// Issue 40, defect 5: four accounts stall everyone. Four users each left 6 Diff calls writing
// into pipes they never read; each call held one of the daemon's workers while it waited for
// its reader (4 users x 4 workers each = all 16), and another user's `changes` timed out after
// 25 s. What must hold: a caller that does not read never holds a worker (what a call writes
// into a caller's fd goes out from a writer that holds none), so another user's calls answer
// promptly however many of the attackers' calls wait on their readers.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "attack_tools.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// Four attackers, beyond the harness's two users (bob is the victim here).
const std::vector<std::string> kAttackers = {"sbxtest-stall1", "sbxtest-stall2", "sbxtest-stall3", "sbxtest-stall4"};

template <typename F>
double SecondsOf(F&& call) {
  auto started = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

class StalledReadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    for (const auto& user : kAttackers) ASSERT_TRUE(EnsureUser(user)) << "cannot make test user " << user;
  }
  void TearDown() override {
    // Killing the readers closes the pipes: the calls end.
    for (pid_t pid : stallers_) kill(pid, SIGKILL);
    for (const auto& user : kAttackers) World().RunAs("root", {"pkill", "-KILL", "-u", user, "-x", "sleep"});
    for (pid_t pid : stallers_) waitpid(pid, nullptr, 0);
    for (const auto& [user, id] : sandboxes_) World().Sandboxctl(user, {"destroy", id});
  }

  /// A sandbox of `user`'s over a fresh project; `script` runs in it as a job first.
  std::string SandboxOf(const std::string& user, const std::string& script) {
    Result made = World().Sandboxctl(user, {"create", World().MakeProject(user)});
    EXPECT_EQ(made.status, 0) << made.err;
    std::string id = Trim(made.out);
    sandboxes_.emplace_back(user, id);
    Result job = World().Sandboxctl(user, {"run", id, "--", "sh", "-c", script});
    EXPECT_EQ(job.status, 0) << job.err;
    return id;
  }

  /// `count` Diff calls of `user`'s on sandbox `id`, each into a pipe whose reader (a sleep)
  /// holds it open and never reads.
  void StallDiffs(const std::string& user, const std::string& id, int count) {
    std::string call = "DBUS_SYSTEM_BUS_ADDRESS='" + World().bus_address() + "' " + MATRIX_FD_CALL_BIN +
                       " /org/sandboxd/Sandbox1/sandbox/" + id +
                       " org.sandboxd.Sandbox1.Sandbox.Diff '@a(suu) []' '@FD@' '@a{sv} {}' | sleep 300";
    for (int i = 0; i < count; ++i) stallers_.push_back(SpawnAs(user, {"/bin/sh", "-c", call}));
  }

  std::vector<pid_t> stallers_;
  std::vector<std::pair<std::string, std::string>> sandboxes_;
};

TEST_F(StalledReadersTest, FourUsersWithDiffsNobodyReadsDoNotDelayAnotherUser) {
  // The victim's sandbox is made before the attack (its making is not what is measured).
  std::string victim = SandboxOf(kBob, "printf 'changed\\n' >> a.txt");
  // Each attacker's diff is some megabytes of text, far more than a pipe holds (64 KiB).
  std::vector<std::string> attacks;
  for (const auto& user : kAttackers) attacks.push_back(SandboxOf(user, "head -c 3000000 /dev/urandom | base64 > big.txt"));
  ASSERT_FALSE(HasFailure());
  for (size_t i = 0; i < kAttackers.size(); ++i) StallDiffs(kAttackers[i], attacks[i], 6);
  // Until every call has reached the daemon and filled its pipe.
  std::this_thread::sleep_for(3s);

  Result changes;
  double changes_took = SecondsOf([&] { changes = World().Sandboxctl(kBob, {"changes", victim}); });
  EXPECT_LT(changes_took, 2.0) << "bob's changes waited behind the attackers' unread diffs: " << changes.err;
  EXPECT_EQ(changes.status, 0) << changes.err;
  EXPECT_EQ(changes.out, "M a.txt\n");

  Result diff;
  double diff_took = SecondsOf([&] { diff = World().Sandboxctl(kBob, {"diff", victim}); });
  EXPECT_LT(diff_took, 2.0) << "bob's diff waited behind the attackers' unread diffs: " << diff.err;
  EXPECT_EQ(diff.status, 0) << diff.err;
  EXPECT_NE(diff.out.find("+changed"), std::string::npos) << diff.out;

  // And an attacker's own other calls are not held by their unread ones either.
  Result own;
  EXPECT_LT(SecondsOf([&] { own = World().Sandboxctl(kAttackers[0], {"changes", attacks[0]}); }), 2.0)
      << "an attacker's next call waited behind their own unread diffs: " << own.err;
  EXPECT_EQ(own.status, 0) << own.err;
}

}  // namespace
}  // namespace sandboxd::it
