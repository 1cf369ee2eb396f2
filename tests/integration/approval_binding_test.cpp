// What you approve is what lands (DESIGN, "Data safety"; issue 39): a decision covers the
// content that was shown when it was made. A job that keeps a file mapped writable can change
// its bytes without a page fault, so without moving its mtime or ctime: a decision made while
// the job ran must not carry over to the bytes it wrote after it.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;

/// A job that writes `first` into conf.sh through a shared writable mapping, waits until the file
/// `go` appears in the root, then writes `then` (unless empty) into the same (still dirty) page
/// and exits without msync: the second write takes no fault, so neither mtime nor ctime moves.
std::string MappedWriter(const std::string& first, const std::string& then, bool linger = false) {
  return "import mmap, os, time\n"
         "fd = os.open('conf.sh', os.O_RDWR | os.O_CREAT, 0o644)\n"
         "os.ftruncate(fd, 16)\n"
         "m = mmap.mmap(fd, 16)\n"
         "m[:16] = b'" + first + "'\n"
         "while not os.path.exists('go'): time.sleep(0.02)\n" +
         (then.empty() ? std::string() : "m[:16] = b'" + then + "'\n") + (linger ? "time.sleep(600)\n" : "");
}

class ApprovalBindingTest : public AliceSandboxTest {
 protected:
  /// Runs MappedWriter in the sandbox on a thread; returns once `diff` shows `first`.
  /// `linger`: the job stays after its second write (until the daemon is killed under it).
  std::thread StartWriter(const std::string& first, const std::string& then, bool linger = false) {
    std::thread writer([this, linger, script = MappedWriter(first, then, linger)] {
      Result run = Ctl({"run", id_, "--", "python3", "-c", script});
      if (!linger) EXPECT_EQ(run.status, 0) << run.err;
    });
    std::string shown;
    for (auto end = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(50ms)) {
      shown = Ctl({"diff", id_, "conf.sh"}).out;
      if (Contains(shown, "+" + first.substr(0, 14))) break;
    }
    EXPECT_TRUE(Contains(shown, "+" + first.substr(0, 14))) << shown;
    return writer;
  }
  std::string ReviewOf(const std::string& path) {
    Result listed = Ctl({"--json", "changes", id_});
    EXPECT_EQ(listed.status, 0) << listed.err;
    for (const auto& entry : nlohmann::json::parse(listed.out))
      if (entry["path"] == path) return entry["review"];
    return "(no change)";
  }
};

TEST_F(ApprovalBindingTest, BytesWrittenThroughAMappingAfterTheApprovalAreNotCommitted) {
  std::thread writer = StartWriter("echo harmless!\\n\\n", "echo PWNED!!!!\\n\\n");
  Result approved = Ctl({"approve", id_, "conf.sh"});
  ASSERT_EQ(approved.status, 0) << approved.err;
  Job("touch go");
  writer.join();
  // The bytes changed under the decision: it lapsed, and the owner sees the change pending.
  EXPECT_EQ(ReviewOf("conf.sh"), "pending");
  Result commit = Ctl({"commit", id_});
  ASSERT_EQ(commit.status, 0) << commit.err;
  struct stat st;
  EXPECT_NE(lstat((project_ + "/conf.sh").c_str(), &st), 0) << "landed: " << ReadWhole(project_ + "/conf.sh");
}

// (The job writes nothing more: a write of the same bytes may take a fault, and so move the
// times, if the page was written back meanwhile, and a decision lapses on the times alone.)
TEST_F(ApprovalBindingTest, AnApprovalMadeWhileAJobRunsHoldsWhenTheBytesStayTheSame) {
  std::thread writer = StartWriter("echo harmless!\\n\\n", "");
  ASSERT_EQ(Ctl({"approve", id_, "conf.sh"}).status, 0);
  Job("touch go");
  writer.join();
  EXPECT_EQ(ReviewOf("conf.sh"), "approved");
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/conf.sh"), std::string("echo harmless!\n\n"));
}

// A restart kills the job that changed the bytes before anyone heard it end: the daemon that
// comes back checks the decisions bound to bytes, so `changes` never says approved of them.
TEST_F(ApprovalBindingTest, ABoundDecisionIsCheckedWhenTheDaemonComesBack) {
  std::thread writer = StartWriter("echo harmless!\\n\\n", "echo PWNED!!!!\\n\\n", /*linger=*/true);
  ASSERT_EQ(Ctl({"approve", id_, "conf.sh"}).status, 0);
  Job("touch go");
  std::this_thread::sleep_for(500ms);  // the writer's second write (it polls every 20 ms)
  World().KillDaemon();
  writer.join();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  EXPECT_EQ(ReviewOf("conf.sh"), "pending");
}

// A hunk decided while the job runs is bound the same way.
TEST_F(ApprovalBindingTest, AHunkDecidedWhileAJobRunsLapsesWhenItsBytesChange) {
  Job("printf 'echo harmless!\\n\\n' > conf.sh");
  ASSERT_EQ(Ctl({"commit", "--all", id_}).status, 0);
  std::thread writer = StartWriter("echo harmless?\\n\\n", "echo PWNED!!!!\\n\\n");
  ASSERT_EQ(Ctl({"approve", id_, "\"conf.sh\":1"}).status, 0);
  Job("rm go 2>/dev/null; touch go");
  writer.join();
  EXPECT_EQ(ReviewOf("conf.sh"), "pending");
  ASSERT_EQ(Ctl({"commit", id_}).status, 0);
  EXPECT_EQ(ReadWhole(project_ + "/conf.sh"), std::string("echo harmless!\n\n"));
}

}  // namespace
}  // namespace sandboxd::it
