// create --quota. Where the machine allows it (loop devices and ext4), the quota is a hard
// limit: a write past it fails inside the job with ENOSPC, as on a full disk, nothing written
// before is lost, and deleting makes room again; through restart, suspend/resume and commits.
// Elsewhere a job whose writes take the sandbox's changes over the quota is stopped (and the
// whole job with it), what it wrote is kept, no job starts while the changes are over it, and
// the sandbox goes on once they are discarded.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// Whether root can make and mount a small ext4 image on a loop device here, tried the way an
/// admin would (mkfs.ext4, mount -o loop): where it can, the daemon must limit hard.
bool LoopExt4Works() {
  Harness& w = World();
  std::string dir = w.dir() + "/loop-probe";
  w.RunAs("root", {"mkdir", "-p", dir + "/mnt"});
  bool works = w.RunAs("root", {"truncate", "-s", "8M", dir + "/img"}).status == 0 &&
               w.RunAs("root", {"mkfs.ext4", "-q", "-F", dir + "/img"}).status == 0 &&
               w.RunAs("root", {"mount", "-o", "loop", dir + "/img", dir + "/mnt"}).status == 0;
  if (works) w.RunAs("root", {"umount", dir + "/mnt"});
  w.RunAs("root", {"rm", "-rf", dir});
  return works;
}

bool HardLimitSaid() { return World().DaemonLog().find("quotas are hard limits") != std::string::npos; }

/// A job writing 30 MB in one go into a sandbox of 10 MiB: fails as on a full disk.
void ExpectFullDisk(const std::string& id, const std::string& when) {
  Result over = Ctl({"run", id, "--", "sh", "-c", "head -c 31457280 /dev/zero > big"});
  EXPECT_EQ(over.status, 1) << when << ": " << over.err;
  EXPECT_NE(over.err.find("No space left on device"), std::string::npos) << when << ": " << over.err;
  EXPECT_EQ(over.err.find("QuotaExceeded"), std::string::npos) << when << ": " << over.err;
  // Nothing written before is lost, and deleting makes room for as much again.
  EXPECT_EQ(Ctl({"run", id, "--", "sh", "-c", "seq 1 200000 | cmp - before"}).status, 0) << when;
  Result room = Ctl({"run", id, "--", "sh", "-c", "rm big && head -c 6000000 /dev/zero > more && rm more"});
  EXPECT_EQ(room.status, 0) << when << ": " << room.err;
}

bool Mounted(const std::string& id) {
  std::istringstream mountinfo(World().DaemonMounts());
  std::string line;
  while (std::getline(mountinfo, line))
    if (line.find(id) != std::string::npos) return true;
  return false;
}

TEST(QuotaTest, AWritePastTheQuotaFailsAsOnAFullDisk) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  if (!LoopExt4Works()) {
    EXPECT_NE(w.DaemonLog().find("quotas stop the job"), std::string::npos) << w.DaemonLog();
    GTEST_SKIP() << "no loop devices or ext4 here: quotas stop jobs instead (the other test)";
  }
  EXPECT_TRUE(HardLimitSaid()) << "loop devices and ext4 work here, yet the daemon did not say it limits hard";
  std::string project = w.MakeProject(kAlice);
  Result created = Ctl({"create", "--quota", "10M", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "seq 1 200000 > before"}).status, 0);
  // (Full to the last byte, the sandbox still runs jobs: those that make room.)
  ExpectFullDisk(id, "at first");

  w.StopDaemon();
  ASSERT_TRUE(w.StartDaemon());
  ExpectFullDisk(id, "after a restart");
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon());
  ExpectFullDisk(id, "after a crash");

  ASSERT_EQ(Ctl({"suspend", id}).status, 0);
  EXPECT_FALSE(Mounted(id)) << "a suspended sandbox keeps a mount";
  Result resumed = Ctl({"resume", id});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  ExpectFullDisk(id, "after suspend and resume");

  // What a commit keeps for undo does not eat into the quota: 8 MB committed, then 8 MB more
  // fit, and the commit is undone and done again.
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "head -c 8000000 /dev/urandom > data"}).status, 0);
  Result committed = Ctl({"commit", id, "--all"});
  ASSERT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project + "/data").size(), 8000000u) << "the commit did not land";
  Result again = Ctl({"run", id, "--", "sh", "-c", "head -c 8000000 /dev/urandom > data2"});
  EXPECT_EQ(again.status, 0) << "what a commit keeps counted against the quota: " << again.err;
  ASSERT_EQ(Ctl({"discard", id}).status, 0);
  Result undone = Ctl({"undo", id});
  EXPECT_EQ(undone.status, 0) << undone.err;
  EXPECT_EQ(Ctl({"changes", id}).out, "A before\nA data\n");
  EXPECT_EQ(Ctl({"run", id, "--", "rm", "data"}).status, 0);
  ExpectFullDisk(id, "after a commit and its undo");

  ASSERT_EQ(Ctl({"destroy", id}).status, 0);
  EXPECT_TRUE(WaitUntil([&] { return !Mounted(id); })) << "a destroyed sandbox keeps a mount";
  auto left = [&] { return w.RunAs("root", {"find", w.dir() + "/state", "-name", "*" + id + "*"}).out; };
  EXPECT_TRUE(WaitUntil([&] { return left().empty(); })) << "a destroyed sandbox left files: " << left();
}

// The image that holds a quota'd sandbox's layers is charged to its owner, not root (issue 40,
// item 7): it is the owner's file (so the host's disk quotas count it against them), in a
// directory only root may enter, and stays so when it grows.
TEST(QuotaTest, TheQuotaImageIsChargedToTheSandboxesOwner) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  if (!LoopExt4Works()) GTEST_SKIP() << "no loop devices or ext4 here: no image to charge";
  std::string project = w.MakeProject(kAlice);
  Result created = Ctl({"create", "--quota", "10M", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  const std::string image = w.dir() + "/state/quota/" + id + ".img";
  struct stat st, dir;
  ASSERT_EQ(stat(image.c_str(), &st), 0) << image;
  EXPECT_EQ(st.st_uid, getpwnam(kAlice)->pw_uid) << "the image is charged to uid " << st.st_uid;
  ASSERT_EQ(stat((w.dir() + "/state/quota").c_str(), &dir), 0);
  EXPECT_EQ(dir.st_uid, 0u);
  EXPECT_EQ(dir.st_mode & 077, 0u) << "others may enter the directory of the images";
  EXPECT_NE(w.RunAs(kAlice, {"head", "-c", "1", image}).status, 0) << "the owner reaches the image itself";
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

// Issue 40, item 7: the shipped configuration sets a default MaxQuota (25% of the state's file
// system): a sandbox created without --quota gets it, and a user asking for more needs polkit's
// manage action. The daemon runs with the very file meson installs.
TEST(QuotaTest, TheShippedConfigurationGivesEverySandboxAShareOfTheStatesFileSystem) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  WriteWhole(w.ConfigPath(), ReadWhole(std::string(SANDBOXD_SOURCE_DIR) + "/daemon/as_root/config/sandboxd.conf.example"));
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  struct statvfs vfs;
  ASSERT_EQ(statvfs((w.dir() + "/state").c_str(), &vfs), 0);
  const uint64_t share = uint64_t{vfs.f_blocks} * vfs.f_frsize / 100 * 25 / (1 << 20) * (1 << 20);
  std::string id = Trim(Ctl({"create", w.MakeProject(kAlice)}).out);
  auto info = nlohmann::json::parse(Ctl({"--json", "show", id}).out, nullptr, false);
  EXPECT_EQ(info["quota_bytes"], share) << "a sandbox created without --quota under the shipped MaxQuota=25%";
  // And it works as the demo uses it: a job writes, the owner commits, the file is live.
  std::string project = info["roots"][0].get<std::string>();
  Result job = Ctl({"run", id, "--", "sh", "-c", "echo demo > demo.txt"});
  EXPECT_EQ(job.status, 0) << job.err;
  Result committed = Ctl({"commit", id, "--all"});
  EXPECT_EQ(committed.status, 0) << committed.err;
  EXPECT_EQ(ReadWhole(project + "/demo.txt"), "demo\n");
  Result more = w.Sandboxctl(kBob, {"create", "--quota", std::to_string(share / (1 << 20) + 1) + "M", w.MakeProject(kBob)});
  EXPECT_EQ(more.status, 1) << "bob got a quota above the shipped maximum";
  EXPECT_NE(more.err.find("MaxQuota"), std::string::npos) << more.err;
  EXPECT_NE(w.DaemonLog().find("MaxQuota=25% is "), std::string::npos) << "the share is not logged";
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
  std::remove(w.ConfigPath().c_str());
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
}

TEST(QuotaTest, AQuotaTooBigToMeanAnythingIsRefused) {
  SANDBOXD_REQUIRE_WORLD();
  // More than the disk that would hold the changes: no limit at all, and not a size to make.
  Result huge = Ctl({"create", "--quota", "8000000T", World().MakeProject(kAlice)});
  EXPECT_EQ(huge.status, 1);
  EXPECT_NE(huge.err.find("larger than"), std::string::npos) << huge.err;
}

TEST(QuotaTest, AJobOverTheQuotaIsStoppedAndWhatItWroteIsKept) {
  SANDBOXD_REQUIRE_WORLD();
  if (HardLimitSaid()) GTEST_SKIP() << "quotas are hard limits here (the test above)";
  std::string project = World().MakeProject(kAlice);
  Result created = Ctl({"create", "--quota", "2M", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  auto info = nlohmann::json::parse(Ctl({"--json", "show", id}).out, nullptr, false);
  ASSERT_TRUE(info.is_object());
  EXPECT_EQ(info["quota_bytes"], 2u << 20);

  // Under the quota: fine.
  ASSERT_EQ(Ctl({"run", id, "--", "sh", "-c", "head -c 500000 /dev/zero > small"}).status, 0);
  // Over it: writing 1 MiB a second, the job is stopped within the first seconds, long before
  // it would end by itself.
  auto start = std::chrono::steady_clock::now();
  Result over = Ctl({"run", id, "--", "sh", "-c",
                     "i=0; while [ $i -lt 60 ]; do head -c 1048576 /dev/zero >> big; i=$((i+1)); sleep 1; done"});
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(over.status, 128 + SIGKILL) << over.err;
  EXPECT_NE(over.err.find("QuotaExceeded"), std::string::npos) << over.err;
  EXPECT_LT(took, std::chrono::seconds(20)) << "the job was not stopped at the quota";
  // Nothing already there is lost: both files are still changes of the sandbox.
  Result changes = Ctl({"changes", id});
  EXPECT_EQ(changes.out, "A big\nA small\n") << changes.err;
  // No job starts while the changes are over the quota, and the refusal names it.
  Result refused = Ctl({"run", id, "--", "true"});
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("over its quota of 2.0 MiB"), std::string::npos) << refused.err;
  // Discarded, the sandbox goes on.
  ASSERT_EQ(Ctl({"discard", id}).status, 0);
  EXPECT_EQ(Ctl({"run", id, "--", "true"}).status, 0);
  // A quota too small to work with is refused.
  Result tiny = Ctl({"create", "--quota", "10K", World().MakeProject(kAlice)});
  EXPECT_EQ(tiny.status, 1);
  EXPECT_NE(tiny.err.find("1 MiB"), std::string::npos) << tiny.err;
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
