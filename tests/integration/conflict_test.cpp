// Conflicts (DESIGN, "Data safety"): a conflict is a change of the live tree that the sandbox
// did not see. Each test makes the live change as the owner would (her shell, her git) and
// checks both sides of the rule: what the sandbox did not see is refused until forced, and
// what it saw is no conflict.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class ConflictTest : public AliceSandboxTest {
 protected:
  Result Live(const std::string& script) const { return World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = project_}); }
  /// `script` as `user` in the project, left running.
  pid_t StartAs(const std::string& user, const std::string& script) const {
    pid_t pid = fork();
    if (pid == 0) {
      if (chdir(project_.c_str()) != 0) _exit(127);
      execlp("runuser", "runuser", "-u", user.c_str(), "--", "sh", "-c", script.c_str(), nullptr);
      _exit(127);
    }
    return pid;
  }
};

// A sandbox used for several commits: the job modifies a file, the owner then deletes it live
// while something still holds it open (her editor, here a shell), so that its inode lives on
// without a name. Committing the job's copy would bring back a file she deleted: a conflict.
TEST_F(ConflictTest, ALiveDeletionIsAConflictInASandboxUsedForSeveralCommits) {
  for (int round = 1; round <= 3; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Job("echo round " + std::to_string(round) + " >> a.txt");
    ASSERT_EQ(Ctl({"commit", "--all", id_}).status, 0);
  }
  Job("echo last >> a.txt");
  pid_t holder = StartAs(kAlice, "exec 3< a.txt; rm a.txt; sleep 5");
  ASSERT_TRUE(WaitUntil([&] { return access((project_ + "/a.txt").c_str(), F_OK) != 0; }));
  Result refused = Ctl({"commit", "--all", id_});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("a.txt"), std::string::npos) << refused.err;
  struct stat st;
  EXPECT_NE(lstat((project_ + "/a.txt").c_str(), &st), 0) << "a file deleted live was brought back by a commit";
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
}

}  // namespace
}  // namespace sandboxd::it
