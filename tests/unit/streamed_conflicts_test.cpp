// A listing right after a job reads its conflicts a page at a time behind the job's settling,
// which stores the sights the conflicts are told by (live_sight.h). A page read before its
// sights are stored would take a live edit the job saw for one it did not: a conflict the owner
// never made. Real directories and the real SQLite store; the settling is played by the test.

#include "changes/live_conflicts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "helper_clients/helper_client.h"
#include "sandbox/layout.h"
#include "sandbox/sandbox.h"
#include "sandbox/live_sight.h"
#include "store/store.h"
#include "temp_dir.h"
#include "myself.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class StreamedConflictsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: the settling reads as the owner (setfsuid), which only root can";
    ASSERT_FALSE(dir_.path().empty());
    std::string live = dir_ / "live";
    ASSERT_EQ(mkdir(live.c_str(), 0755), 0);
    record_ = {"00000000000000aa", "p", getuid(), SandboxState::kActive, 0, {live}};
    store_.Insert(record_);
    sandbox_.emplace(record_, layout_);
    ASSERT_EQ(system(("mkdir -p '" + sandbox_->paths().UpperDir(0) + "'").c_str()), 0);
    // A live file the owner edited after the sandbox was made and before the job, which then
    // edited the sandbox's copy of it: the job saw the owner's edit.
    for (const char* name : {"/a.txt", "/b.txt"}) {
      Write(live + name, "live\n");
      Write(sandbox_->paths().UpperDir(0) + name, "live\nsandbox\n");
    }
  }

  testing::ScopedTempDir dir_;
  Layout layout_{dir_ / "state", dir_ / "run"};
  Store store_{dir_ / "db"};
  SightStore sights_{store_};
  SandboxRecord record_;
  std::optional<Sandbox> sandbox_;
};

// Two pages: each is read once the settling has stored its own sights, the second with what
// was stored after the first was read.
TEST_F(StreamedConflictsTest, EachPageIsReadOnceTheSettlingHasStoredItsSights) {
  sandbox_->gate().EndJob(sandbox_->gate().BeginJob(), /*settle=*/true);
  ASSERT_TRUE(sandbox_->gate().QueueSettle(0));
  auto pass = sandbox_->gate().NextSettlePass();
  ASSERT_TRUE(pass);
  UniqueFd live = sandbox_->OpenLiveRoot(0);
  // The settling stores a page's sight and says how far it has come.
  auto settle = [&](const std::string& path) {
    sights_.RecordFirst(record_.id, {{{0, path}, LiveSight(testing::Myself(), live.get(), path)}});
    sandbox_->gate().SettledThrough({0, path});
  };

  // The listing: since the sandbox last agreed with the live tree (0: the epoch) every live
  // entry has changed, so only a sight tells that the job saw it.
  HelperPrograms helpers("/nonexistent/helper");
  StreamedConflicts conflicts(*sandbox_, sights_, 0, helpers, {});
  for (const std::string path : {"a.txt", "b.txt"}) {
    SCOPED_TRACE(path);
    Change edited{path, ChangeKind::kModified, EntryType::kFile, EntryType::kFile, 0644, 0644};
    std::atomic<bool> read{false};
    auto page = std::async(std::launch::async, [&] {
      Conflicts found = conflicts.Of({{0, {edited}}});
      read = true;
      return found;
    });
    std::this_thread::sleep_for(200ms);
    EXPECT_FALSE(read) << "the page's conflicts were read before the settling stored its sights";
    settle(path);
    ASSERT_EQ(page.wait_for(5s), std::future_status::ready);
    EXPECT_TRUE(page.get().empty()) << "a live edit the job saw was taken for a conflict";
  }
  sandbox_->gate().SettlePassDone(*pass);
}

}  // namespace
}  // namespace sandboxd
