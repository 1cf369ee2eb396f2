// Suspend and resume with real overlay mounts and real archives: the change set after a resume
// is the one before the suspend, entry by entry, decisions included; a suspended sandbox
// refuses what needs its layers; a daemon killed while suspending or resuming settles it at
// start-up.

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

class SuspendTest : public AliceSandboxTest {
 protected:
  std::string Storage() const { return World().dir() + "/state/sandboxes/" + id_; }
  std::string Merged() const { return World().MergedView(id_); }
  std::string State() const {
    auto shown = nlohmann::json::parse(Ctl({"--json", "show", id_}).out, nullptr, false);
    return shown.is_object() ? shown.value("state", "") : "";
  }
  /// Everything a person or a program can see of the change set.
  struct Seen {
    std::string changes, json, diff;
    std::map<std::string, std::string> merged;
    bool operator==(const Seen&) const = default;
  };
  Seen Look() const {
    return {Ctl({"changes", id_}).out, Ctl({"--json", "changes", id_}).out, Ctl({"diff", id_}).out, Snapshot(Merged())};
  }
};

// Every kind of entry an upper layer holds: modified, new and deleted files, a new directory
// tree, a directory deleted and made again (opaque), a symlink, a fifo, a setuid file, two
// names of one new file, a rename, and a decision on one hunk.
constexpr const char* kEveryKind =
    "printf 'changed\\n' >> a.txt && rm b.txt && mkdir -p new/deep && echo deep > new/deep/d.txt && "
    "rm -r sub && mkdir sub && echo again > sub/again.txt && ln -s a.txt newlink && mkfifo pipe && "
    "echo tool > tool && chmod 4755 tool && echo twice > one && ln one two && mv c.txt moved.txt";

TEST_F(SuspendTest, ARoundTripKeepsTheChangeSetEntryByEntry) {
  Job(kEveryKind);
  ASSERT_EQ(Ctl({"approve", id_, "b.txt"}).status, 0);
  const Seen before = Look();
  ASSERT_NE(before.changes, "");
  ASSERT_NE(before.changes.find("D b.txt [approved]"), std::string::npos) << before.changes;

  Result suspended = Ctl({"suspend", id_});
  ASSERT_EQ(suspended.status, 0) << suspended.err;
  EXPECT_NE(suspended.out.find("archived"), std::string::npos) << suspended.out;
  EXPECT_EQ(State(), "suspended");
  EXPECT_FALSE(Exists(Storage() + "/upper/0")) << "the layer was not freed";
  struct stat archive;
  ASSERT_EQ(stat((Storage() + "/archive/0.tar.zst").c_str(), &archive), 0);
  EXPECT_EQ(archive.st_mode & 07777, 0600u);
  // Charged to the owner (written as she writes), and reached by root alone.
  EXPECT_EQ(archive.st_uid, getpwnam(kAlice)->pw_uid);
  struct stat holder;
  ASSERT_EQ(stat((Storage() + "/archive").c_str(), &holder), 0);
  EXPECT_EQ(holder.st_uid, 0u);
  EXPECT_EQ(holder.st_mode & 07777, 0700u);

  // While suspended, whatever needs the layers says so; show and list still answer.
  for (const auto& args : std::vector<std::vector<std::string>>{{"changes", id_}, {"diff", id_}, {"run", id_, "--", "true"},
                                                                 {"commit", id_, "--all"}, {"approve", id_, "--all"},
                                                                 {"discard", id_}, {"suspend", id_}}) {
    Result refused = Ctl(args);
    EXPECT_EQ(refused.status, 1) << args[0];
    EXPECT_NE(refused.err.find("suspended"), std::string::npos) << args[0] << ": " << refused.err;
    if (args[0] != "suspend") EXPECT_NE(refused.err.find("resume it before you"), std::string::npos) << args[0] << ": " << refused.err;
  }
  EXPECT_NE(Ctl({"list"}).out.find(id_), std::string::npos);

  Result resumed = Ctl({"resume", id_});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(State(), "active");
  EXPECT_FALSE(Exists(Storage() + "/archive/0.tar.zst")) << "the archive outlived the resume";
  const Seen after = Look();
  EXPECT_EQ(after.changes, before.changes);
  EXPECT_EQ(after.json, before.json);
  EXPECT_EQ(after.diff, before.diff);
  EXPECT_EQ(after.merged, before.merged) << "merged view after:\n" << Describe(after.merged);
  Result again = Ctl({"resume", id_});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("not suspended"), std::string::npos) << again.err;
  // And the resumed sandbox commits as it would have.
  auto merged = Snapshot(Merged());
  ASSERT_EQ(Ctl({"commit", id_, "--all"}).status, 0);
  EXPECT_EQ(Snapshot(project_), merged);
}

// Decisions are pinned to the archive and back a page at a time (a million of them are never
// held): more than a page of them, each with its own verdict, all come back as they were.
TEST_F(SuspendTest, MoreDecisionsThanAPageComeBackEachAsItWas) {
  Job("mkdir many && cd many && seq 1 9000 | xargs touch");
  ASSERT_EQ(Ctl({"approve", id_, "--all"}).status, 0);
  ASSERT_EQ(Ctl({"reject", id_, "many/1", "many/4500", "many/9000"}).status, 0);
  const std::string before = Ctl({"changes", id_}).out;
  ASSERT_NE(before.find("A many/4500 [rejected]"), std::string::npos) << before.substr(0, 2000);
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  Result resumed = Ctl({"resume", id_});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const std::string after = Ctl({"changes", id_}).out;
  EXPECT_EQ(after, before);
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 9001);
}

// A sparse file stays sparse (issue 40, item 3): `truncate -s 1G` costs no blocks before the
// suspend and none after the resume (it came back as 1 GiB of blocks written by root).
TEST_F(SuspendTest, ASparseFileCostsNoMoreBlocksAfterARoundTrip) {
  Job("truncate -s 1G sparse && printf x | dd of=sparse bs=1 seek=536870912 conv=notrunc 2>/dev/null");
  const std::string upper = World().dir() + "/state/sandboxes/" + id_ + "/upper/0/sparse";
  struct stat before, after;
  ASSERT_EQ(stat(upper.c_str(), &before), 0) << upper;
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  ASSERT_EQ(Ctl({"resume", id_}).status, 0);
  ASSERT_EQ(stat(upper.c_str(), &after), 0) << upper;
  EXPECT_EQ(after.st_size, 1ll << 30);
  EXPECT_LE(after.st_blocks, before.st_blocks + 64) << "the holes came back as " << after.st_blocks * 512 << " bytes of blocks";
  Result read = Ctl({"run", id_, "--", "sh", "-c", "dd if=sparse bs=1 skip=536870912 count=1 2>/dev/null"});
  EXPECT_EQ(read.out, "x");
}

TEST_F(SuspendTest, SuspendIsRefusedWhileAJobRuns) {
  pid_t job = StartSandboxctl(kAlice, {"run", id_, "--", "sleep", "3"});
  ASSERT_TRUE(WaitUntil([&] {
    auto shown = nlohmann::json::parse(Ctl({"--json", "show", id_}).out, nullptr, false);
    return shown.is_object() && shown.value("running_jobs", 0) == 1;
  }));
  Result busy = Ctl({"suspend", id_});
  EXPECT_EQ(busy.status, 1);
  EXPECT_NE(busy.err.find("running job"), std::string::npos) << busy.err;
  EXPECT_EQ(State(), "active");
  kill(job, SIGINT);
  waitpid(job, nullptr, 0);
}

TEST_F(SuspendTest, ASuspendedSandboxStaysSuspendedOverARestartAndCanBeDestroyed) {
  Job("echo new > n.txt");
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  EXPECT_EQ(State(), "suspended");
  EXPECT_FALSE(Exists(Merged() + "/n.txt")) << "a suspended sandbox was mounted again";
  ASSERT_EQ(Ctl({"resume", id_}).status, 0);
  EXPECT_EQ(Changes(), "A n.txt\n");
  ASSERT_EQ(Ctl({"suspend", id_}).status, 0);
  ASSERT_EQ(Ctl({"destroy", id_}).status, 0);
  EXPECT_TRUE(WaitUntil([&] { return !Exists(Storage()); })) << "the archive outlived its sandbox";
  id_.clear();
}

/// How long `sandboxctl ARGS` takes, start to end.
std::chrono::steady_clock::duration Timed(const std::vector<std::string>& args) {
  auto start = std::chrono::steady_clock::now();
  pid_t client = StartSandboxctl(kAlice, args);
  int status = 0;
  waitpid(client, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << args[0];
  return std::chrono::steady_clock::now() - start;
}

// Thousands of files, so that a kill lands inside the archiving or the restoring (the kills
// are spread over how long an undisturbed suspend and resume take; the first is made as soon
// as the sandbox shows it is suspending, so that at least one lands inside on a machine whose
// speed changed since the timing): after the restart the sandbox is either active with every
// change or suspended, and a resume then brings every change back.
TEST_F(SuspendTest, AKilledDaemonSettlesACutOffSuspendOrResume) {
  Job("mkdir many && i=0; while [ $i -lt 4000 ]; do echo $i > many/f$i; i=$((i+1)); done");
  const std::string all = Changes();
  const size_t log_start = World().DaemonLog().size();
  auto suspend_takes = Timed({"suspend", id_});
  auto resume_takes = Timed({"resume", id_});
  ASSERT_EQ(Changes(), all);
  int found_suspended = 0;
  for (double fraction : {0.3, 0.5, 0.7, 0.9}) {
    SCOPED_TRACE("killed at " + std::to_string(fraction) + " of a suspend");
    auto kill_at = [&](const std::string& verb, std::chrono::steady_clock::duration takes) {
      pid_t client = StartSandboxctl(kAlice, {verb, id_});
      if (fraction == 0.3) {
        const std::string under_way = verb == "suspend" ? "suspending" : "resuming";
        WaitUntil([&] { return State() == under_way || waitpid(client, nullptr, WNOHANG) == client; }, std::chrono::seconds(30));
      } else {
        std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::microseconds>(takes * fraction));
      }
      World().KillDaemon();
      waitpid(client, nullptr, 0);
      ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
    };
    kill_at("suspend", suspend_takes);
    std::string state = State();
    ASSERT_TRUE(state == "active" || state == "suspended") << state;
    if (state == "suspended") {
      ++found_suspended;
      kill_at("resume", resume_takes);  // and a resume cut off in turn
      if (State() == "suspended") {
        ASSERT_EQ(Ctl({"resume", id_}).status, 0);
      }
    }
    ASSERT_EQ(State(), "active");
    EXPECT_EQ(Changes(), all);
  }
  std::string log = World().DaemonLog().substr(log_start);
  EXPECT_NE(log.find("was cut off"), std::string::npos) << "no kill landed inside a suspend or resume";
  std::printf("suspend crash test: %d of 4 kills found the sandbox suspended; suspend %lld ms, resume %lld ms\n",
              found_suspended, static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(suspend_takes).count()),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(resume_takes).count()));
}

}  // namespace
}  // namespace sandboxd::it
