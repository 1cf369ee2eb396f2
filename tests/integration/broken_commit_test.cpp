// A commit that can neither finish nor be taken back leaves its sandbox broken: it says so to
// the caller and to the owner's listeners (SandboxStateChanged "broken", which a desktop app
// follows), runs nothing more, and the next start of the daemon settles the commit from its
// journal, wholly one way or the other (DESIGN, "Data safety"). Made real with a sandboxd-helper
// whose commit steps fail from a switch on: the first run of the steps does them all and then
// fails, as if cut off before it could answer, and taking them back fails too.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "bus_monitor.h"
#include "harness.h"
#include "wrapped_programs.h"

namespace sandboxd::it {
namespace {

namespace fs = std::filesystem;

class BrokenCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    Harness& w = World();
    wrapped_ = w.job_visible_dir() + "/failing-steps";
    switch_ = wrapped_ + "/switch";
    fs::remove_all(switch_);
    helper_ = MakeWrappedPrograms(wrapped_, [&](const std::string& program, const std::string& real) {
      if (program != "sandboxd-helper") return "exec " + real + " \"$@\"\n";
      // (The helper runs as the owner: the switch is a directory the owner can write in.)
      return "if [ \"$1\" = steps ] && [ -d " + switch_ + " ]; then\n"
             "  if mkdir " + switch_ + "/once 2>/dev/null; then " + real + " steps > /dev/null; fi\n"
             "  exit 1\n"
             "fi\n"
             "exec " + real + " \"$@\"\n";
    });
    ASSERT_TRUE(RestartDaemonOn(helper_)) << w.DaemonLog();
  }
  void TearDown() override {
    if (!World().skip_reason().empty()) return;
    fs::remove_all(switch_);
    if (!id_.empty()) World().Sandboxctl(kAlice, {"destroy", id_});
    RestartUsualDaemon(wrapped_);
  }
  void FailSteps() {
    fs::create_directories(switch_);
    chmod(switch_.c_str(), 0777);
  }

  std::string wrapped_, switch_, helper_, id_;
};

TEST_F(BrokenCommitTest, ABrokenSandboxIsAnnouncedRunsNothingAndTheNextStartSettlesIt) {
  Harness& w = World();
  const std::string project = w.MakeProject(kAlice);
  const std::string before = ReadWhole(project + "/a.txt");
  Result created = w.Sandboxctl(kAlice, {"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  id_ = Trim(created.out);
  ASSERT_EQ(w.Sandboxctl(kAlice, {"run", id_, "--", "sh", "-c", "echo changed > a.txt && echo new > new.txt"}).status, 0);
  BusMonitor alice(kAlice, "broken-commit-alice");
  ASSERT_TRUE(alice.Ready()) << alice.Text();

  FailSteps();
  Result commit = w.Sandboxctl(kAlice, {"commit", "--all", id_});
  EXPECT_EQ(commit.status, 1) << commit.out << commit.err;
  EXPECT_TRUE(Contains(commit.err, "could not be taken back")) << commit.err;
  EXPECT_TRUE(Contains(commit.err, id_)) << commit.err;
  const std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id_;
  EXPECT_TRUE(alice.WaitFor("SandboxStateChanged (objectpath '" + sandbox + "', '" + id_ + "', 'broken')")) << alice.Text();
  // Broken runs nothing, and says why, naming the sandbox.
  Result job = w.Sandboxctl(kAlice, {"run", id_, "--", "true"});
  EXPECT_EQ(job.status, 1);
  EXPECT_TRUE(Contains(job.err, id_)) << job.err;
  EXPECT_TRUE(Contains(job.err, "cannot be used: commit")) << job.err;

  // The next start settles the commit from its journal: wholly landed or wholly not, and the
  // sandbox is active again (and says so).
  fs::remove_all(switch_);
  ASSERT_TRUE(RestartDaemonOn(helper_)) << w.DaemonLog();
  const std::string landed = ReadWhole(project + "/a.txt");
  const bool has_new = fs::exists(project + "/new.txt");
  if (landed == "changed\n") {
    EXPECT_TRUE(has_new) << "a.txt landed without new.txt: the commit was settled half-way";
  } else {
    EXPECT_EQ(landed, before) << "a.txt is neither as it was nor as committed";
    EXPECT_FALSE(has_new) << "new.txt landed without a.txt: the commit was settled half-way";
  }
  Result shown = w.Sandboxctl(kAlice, {"--json=short", "show", id_});
  EXPECT_TRUE(Contains(shown.out, "\"state\":\"active\"")) << shown.out << shown.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"run", id_, "--", "true"}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
