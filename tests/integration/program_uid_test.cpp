// Each of sandboxd's programs runs as the README's table "What runs as root, and why" says, the
// words its source folder is filed by (docs/architecture.md, "Folders by privilege";
// tests/unit/wings_test.cpp holds the folders to the table). The daemon is started with its
// helpers behind wrappers that write down the uids each start has (real, effective, saved,
// file-system: /proc/PID/status) and then exec the real program; a sandbox then goes through
// everything that starts one, and every start is held to the table.
//
// Not started here: sandboxd-job-exec runs inside the job, whose uid IsolationTest checks, and
// sandboxd-user-overlay only in user mode, where nothing runs as root (UserModeTest).

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../readme_runs_as.h"
#include "harness.h"
#include "wrapped_programs.h"

namespace sandboxd::it {
namespace {

/// "Uid: R E S F" of /proc/PID/status as "R E S F".
std::string UidsOf(const std::string& status_line) {
  std::istringstream words(status_line);
  std::string word, uids;
  words >> word;  // "Uid:"
  while (words >> word) uids += (uids.empty() ? "" : " ") + word;
  return uids;
}

class ProgramUidTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    Harness& w = World();
    wrapped_ = w.job_visible_dir() + "/wrapped-programs";
    log_ = wrapped_ + "/starts.log";
    const std::string helper = MakeWrappedPrograms(wrapped_, [&](const std::string& program, const std::string& real) {
      return "echo \"" + program + " $(grep '^Uid:' /proc/$$/status)\" >> " + log_ + "\nexec " + real + " \"$@\"\n";
    });
    WriteWhole(log_, "");
    chmod(log_.c_str(), 0666);  // the programs that run as the owner write their line too
    ASSERT_TRUE(RestartDaemonOn(helper)) << w.DaemonLog();
  }
  void TearDown() override {
    if (!World().skip_reason().empty()) return;
    if (!id_.empty()) World().Sandboxctl(kAlice, {"destroy", id_});
    RestartUsualDaemon(wrapped_);
  }

  /// Each wrapped program's starts, as "R E S F" uids, from the log.
  std::map<std::string, std::vector<std::string>> Starts() const {
    std::map<std::string, std::vector<std::string>> starts;
    for (const auto& line : Lines(ReadWhole(log_))) {
      size_t space = line.find(' ');
      if (space != std::string::npos) starts[line.substr(0, space)].push_back(UidsOf(line.substr(space + 1)));
    }
    return starts;
  }

  std::string wrapped_, log_, id_;
};

TEST_F(ProgramUidTest, EveryProgramRunsAsTheReadmeSays) {
  Harness& w = World();
  struct passwd* alice = getpwnam(kAlice);
  ASSERT_NE(alice, nullptr);
  const std::string root = "0 0 0 0";
  const std::string owner = std::to_string(alice->pw_uid) + " " + std::to_string(alice->pw_uid) + " " +
                            std::to_string(alice->pw_uid) + " " + std::to_string(alice->pw_uid);
  // The table's words, as uids at a program's start. The archive helper takes the owner's
  // file-system identity itself, first thing (checked below by whose its archive is).
  const std::map<std::string, std::string> kUidsOf = {
      {"root", root},
      {"the owner", owner},
      {"root's uid, the owner's file-system identity, few capabilities", root},
  };

  // Everything that starts one: a job (the job starter), a diff (the text helper), a commit
  // (the helper), a suspend and resume (the archive helper), a job allowed a host (the forwarder).
  Result created = w.Sandboxctl(kAlice, {"create", w.MakeProject(kAlice)});
  ASSERT_EQ(created.status, 0) << created.err;
  id_ = Trim(created.out);
  Result job = w.Sandboxctl(kAlice, {"run", id_, "--", "sh", "-c", "echo more >> a.txt && echo new > new.txt"});
  ASSERT_EQ(job.status, 0) << job.err;
  Result diff = w.Sandboxctl(kAlice, {"diff", id_});
  ASSERT_EQ(diff.status, 0) << diff.err;
  ASSERT_TRUE(Contains(diff.out, "+more")) << diff.out;
  ASSERT_EQ(w.Sandboxctl(kAlice, {"approve", id_, "new.txt"}).status, 0);
  Result commit = w.Sandboxctl(kAlice, {"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  Result suspended = w.Sandboxctl(kAlice, {"suspend", id_});
  ASSERT_EQ(suspended.status, 0) << suspended.err;
  struct stat archive {};
  const std::string archive_path = w.dir() + "/state/sandboxes/" + id_ + "/archive/0.tar.zst";
  ASSERT_EQ(lstat(archive_path.c_str(), &archive), 0) << archive_path;
  EXPECT_EQ(archive.st_uid, alice->pw_uid) << "the archive helper wrote the archive as root, not with the owner's file-system identity";
  Result resumed = w.Sandboxctl(kAlice, {"resume", id_});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  // The job asks the forwarder for its host (a made-up address comes back), so the forwarder
  // has started before the job ends: a job that ended at once could have it killed, with its
  // wrapper, before the wrapper wrote its line.
  Result allowed = w.Sandboxctl(kAlice, {"run", "--allow-host", "web.sbxtest.example", id_, "--", "getent", "ahostsv4", "web.sbxtest.example"});
  ASSERT_EQ(allowed.status, 0) << allowed.err;
  EXPECT_TRUE(Contains(allowed.out, "198.18.")) << "the job's lookup was not answered by its forwarder: " << allowed.out;

  auto runs_as = ReadmeRunsAsTable(kSourceDir + "/README.md");
  auto starts = Starts();
  SCOPED_TRACE("starts:\n" + ReadWhole(log_));
  ASSERT_TRUE(runs_as.count("sandboxd")) << "the README's table \"What runs as root, and why\" was not found";
  ASSERT_TRUE(kUidsOf.count(runs_as["sandboxd"])) << "the README says sandboxd runs as " << runs_as["sandboxd"];
  std::string daemon_uids;
  for (const auto& line : Lines(ReadWhole("/proc/" + std::to_string(w.daemon_pid()) + "/status")))
    if (line.rfind("Uid:", 0) == 0) daemon_uids = UidsOf(line);
  EXPECT_EQ(daemon_uids, kUidsOf.at(runs_as["sandboxd"])) << "sandboxd itself";
  for (const auto& program : kHelperPrograms) {
    ASSERT_TRUE(runs_as.count(program)) << "the README's table does not say what " << program << " runs as";
    ASSERT_TRUE(kUidsOf.count(runs_as[program])) << "the README says " << program << " runs as \"" << runs_as[program]
                                                  << "\", which this test does not know";
    EXPECT_FALSE(starts[program].empty()) << program << " was never started";
    for (const auto& uids : starts[program])
      EXPECT_EQ(uids, kUidsOf.at(runs_as[program])) << program << " started with uids (real effective saved fs) " << uids
                                                    << "; the README says it runs as " << runs_as[program];
  }
}

}  // namespace
}  // namespace sandboxd::it
