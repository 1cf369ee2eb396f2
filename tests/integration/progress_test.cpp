// Progress of long work as its owner follows it: a listener of alice's on the bus (another
// connection than the one that asked) hears Sandbox.Progress while a suspend, a resume and a
// commit of many files work, each ending with "done"; and sandboxctl draws its bar on a
// terminal for work over a second, and nothing when it is not one.

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "bus_monitor.h"
#include "conversation.h"
#include "harness.h"

namespace sandboxd::it {
namespace {

struct Heard {
  uint64_t entries_done, entries_total, bytes_done, bytes_total;
};

/// The figures of every Progress signal of `operation` in `phase` that `text` holds, in order.
std::vector<Heard> HeardIn(const std::string& text, const std::string& operation, const std::string& phase) {
  std::vector<Heard> heard;
  std::regex signal("Progress \\('" + operation + "', '" + phase + "', uint64 (\\d+), uint64 (\\d+), uint64 (\\d+), uint64 (\\d+)\\)");
  for (std::sregex_iterator it(text.begin(), text.end(), signal), end; it != end; ++it)
    heard.push_back({std::stoull((*it)[1]), std::stoull((*it)[2]), std::stoull((*it)[3]), std::stoull((*it)[4])});
  return heard;
}

/// A job of alice's that makes `files` small files in 100 directories of the sandbox.
const char* kManyFiles =
    "import os, sys\n"
    "n = int(sys.argv[1])\n"
    "for i in range(n):\n"
    "    d = 'many%02d' % (i % 100)\n"
    "    os.makedirs(d, exist_ok=True)\n"
    "    with open('%s/f%06d.txt' % (d, i), 'w') as f: f.write('file %d\\n' % i)\n";

class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SANDBOXD_REQUIRE_WORLD();
    project_ = World().MakeProject(kAlice);
    Result created = World().Sandboxctl(kAlice, {"create", project_});
    ASSERT_EQ(created.status, 0) << created.err;
    id_ = Trim(created.out);
  }
  void TearDown() override {
    if (!id_.empty()) World().Sandboxctl(kAlice, {"destroy", id_});
  }
  void MakeFiles(int files) {
    Result made = World().Sandboxctl(kAlice, {"run", "--no-live-feed", id_, "python3", "-c", kManyFiles, std::to_string(files)});
    ASSERT_EQ(made.status, 0) << made.err;
  }
  std::string project_, id_;
};

TEST_F(ProgressTest, AnotherConnectionOfTheOwnerHearsSuspendResumeAndCommitWork) {
  BusMonitor alice(kAlice, "progress-alice");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  MakeFiles(20000);
  const std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id_ + ": org.sandboxd.Sandbox1.Sandbox.Progress ";
  ASSERT_EQ(World().Sandboxctl(kAlice, {"suspend", id_}).status, 0);
  EXPECT_TRUE(alice.WaitFor(sandbox + "('suspend', 'archiving', ")) << alice.Text();
  EXPECT_TRUE(alice.WaitFor(sandbox + "('suspend', 'done', ")) << alice.Text();
  ASSERT_EQ(World().Sandboxctl(kAlice, {"resume", id_}).status, 0);
  EXPECT_TRUE(alice.WaitFor(sandbox + "('resume', 'restoring', ")) << alice.Text();
  EXPECT_TRUE(alice.WaitFor(sandbox + "('resume', 'done', ")) << alice.Text();
  Result commit = World().Sandboxctl(kAlice, {"commit", id_, "--all"});
  ASSERT_EQ(commit.status, 0) << commit.err;
  EXPECT_TRUE(alice.WaitFor(sandbox + "('commit', 'moving', ")) << alice.Text();
  EXPECT_TRUE(alice.WaitFor(sandbox + "('commit', 'done', ")) << alice.Text();
  // The totals: a suspend counts the layer's entries (its top and 100 directories besides the
  // files and the harness's sandbox work), a commit's moves are its entries.
  std::string heard = alice.Text();
  EXPECT_TRUE(Contains(heard, "('commit', 'done', uint64 20100, uint64 20100, uint64 0, uint64 0)")) << heard;
  // Without a terminal, no bar reached the caller's stderr.
  EXPECT_EQ(commit.err.find('\r'), std::string::npos) << commit.err;
}

// Over two roots, a suspend's and a resume's figures are the sandbox's: the totals hold from
// the first signal to the last and what is done never goes back (each root's helper starts
// from nothing).
TEST_F(ProgressTest, FiguresOverSeveralRootsOnlyMoveOn) {
  // Not the fixture's project: its sandbox holds that root.
  std::string first = World().MakeProject(kAlice), second = World().MakeProject(kAlice);
  Result created = World().Sandboxctl(kAlice, {"create", first, second});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  for (const auto& root : {first, second}) {
    Result made = World().Sandboxctl(kAlice, {"run", "--no-live-feed", "--cwd", root, id, "python3", "-c", kManyFiles, "30000"});
    ASSERT_EQ(made.status, 0) << made.err;
  }
  BusMonitor alice(kAlice, "progress-roots");
  ASSERT_TRUE(alice.Ready()) << alice.Text();
  const std::string sandbox = "/org/sandboxd/Sandbox1/sandbox/" + id + ": org.sandboxd.Sandbox1.Sandbox.Progress ";
  ASSERT_EQ(World().Sandboxctl(kAlice, {"suspend", id}).status, 0);
  EXPECT_TRUE(alice.WaitFor(sandbox + "('suspend', 'done', ")) << alice.Text();
  ASSERT_EQ(World().Sandboxctl(kAlice, {"resume", id}).status, 0);
  EXPECT_TRUE(alice.WaitFor(sandbox + "('resume', 'done', ")) << alice.Text();
  World().Sandboxctl(kAlice, {"destroy", id});

  const std::string text = alice.Text();
  auto archiving = HeardIn(text, "suspend", "archiving"), restoring = HeardIn(text, "resume", "restoring");
  ASSERT_GE(archiving.size(), 2u) << text;
  ASSERT_GE(restoring.size(), 2u) << text;
  // Both layers: 30000 files, 100 directories and the top, each.
  EXPECT_EQ(archiving.front().entries_total, 2u * 30101) << text;
  for (size_t i = 1; i < archiving.size(); ++i) {
    EXPECT_EQ(archiving[i].entries_total, archiving.front().entries_total) << text;
    EXPECT_EQ(archiving[i].bytes_total, archiving.front().bytes_total) << text;
    EXPECT_GE(archiving[i].entries_done, archiving[i - 1].entries_done) << text;
    EXPECT_GE(archiving[i].bytes_done, archiving[i - 1].bytes_done) << text;
  }
  EXPECT_GT(archiving.back().entries_done, 30101u) << "the second root's entries come after the first's:\n" << text;
  for (size_t i = 1; i < restoring.size(); ++i) {
    EXPECT_EQ(restoring[i].bytes_total, restoring.front().bytes_total) << text;
    EXPECT_GE(restoring[i].entries_done, restoring[i - 1].entries_done) << text;
    EXPECT_GE(restoring[i].bytes_done, restoring[i - 1].bytes_done) << text;
  }
  EXPECT_GT(restoring.back().entries_done, 30101u) << text;
}

// On a terminal, sandboxctl shows the bar while the work goes on and wipes it at the end.
TEST_F(ProgressTest, ATerminalShowsTheBarForWorkOverASecond) {
  MakeFiles(60000);
  Conversation commit(kAlice, project_, {"commit", id_, "--all"});
  EXPECT_EQ(commit.Finish(std::chrono::seconds(300)), 0) << commit.screen();
  EXPECT_TRUE(Contains(commit.screen(), "\rcommit: ")) << commit.screen();
  EXPECT_TRUE(Contains(commit.screen(), " entries\033[K")) << commit.screen();
  EXPECT_TRUE(Contains(commit.screen(), "\r\033[KCommitted 60100 changes.")) << commit.screen().substr(commit.screen().size() - 200);
}

}  // namespace
}  // namespace sandboxd::it
