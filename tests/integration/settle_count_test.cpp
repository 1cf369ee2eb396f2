// A job's end counts the change set from the paths the job touched alone, where the sandbox's
// change feed followed its layers since the last settling (job_settling.h, issue 41 target 3).
// The promise that must hold whatever the job does: the count ChangeSetChanged carries is the
// change set a listing shows. Each job below attacks one way a touched-paths count could miss
// what changed: bytes written through a mapping (no write(2) to see), a file copied up
// unchanged and changed by a later job, content written back as it was, a mode, a live file and
// a live directory removed, a directory made where a live one was (it hides every live entry
// beneath it), a directory moved with its entries, a hard link whose other name changes with it,
// the root's own mode; and the same after a commit, a discard, and a job that asked for no feed.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bus_monitor.h"
#include "harness.h"
#include "sandbox_fixture.h"

namespace sandboxd::it {
namespace {

class SettleCountTest : public AliceSandboxTest {
 protected:
  void PrepareProject() override {
    Result made = World().RunAs(kAlice,
                                {"sh", "-c",
                                 "echo keep > keep.txt && echo edit > edit.txt && printf 'abcdefgh' > mapped.bin && "
                                 "echo run > mode.sh && mkdir -p dir tree/x && echo a > dir/a && echo b > dir/b && "
                                 "echo y > tree/x/y.txt && echo z > tree/z.txt && echo old > h1 && ln h1 h2"},
                                {.cwd = project_});
    ASSERT_EQ(made.status, 0) << made.err;
  }

  /// How many of the job ends of this sandbox were settled from the paths they touched alone
  /// (the daemon says so at debug level, which the test world's daemon logs).
  size_t SettledFromTouched() const {
    const std::string log = World().DaemonLog(), said = "sandbox " + id_ + ": settled from ";
    size_t count = 0;
    for (size_t at = log.find(said); at != std::string::npos; at = log.find(said, at + 1)) ++count;
    return count;
  }

  /// Runs `script` as a job (with `flags` before the sandbox id), waits for the signal its end
  /// sends, and checks that it counts what a listing shows; with `from_touched`, that the job's
  /// end looked at what it touched alone (else a full scan would pass the test for the wrong
  /// reason).
  void JobThenCount(const BusMonitor& monitor, const std::string& what, const std::string& script, bool from_touched,
                    const std::vector<std::string>& flags = {}) {
    SCOPED_TRACE(what);
    size_t before = monitor.ChangeSetChanged().first;
    size_t settled_before = SettledFromTouched();
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {id_, "--", "sh", "-c", script});
    Result run = Ctl(args);
    ASSERT_EQ(run.status, 0) << run.err;
    ASSERT_TRUE(WaitUntil([&] { return monitor.ChangeSetChanged().first > before; }, std::chrono::seconds(30))) << monitor.Text();
    std::string listing = Changes();
    long listed = static_cast<long>(std::count(listing.begin(), listing.end(), '\n'));
    EXPECT_EQ(monitor.ChangeSetChanged().second, listed) << "after: " << what << "\nthe change set:\n" << listing;
    if (from_touched) EXPECT_EQ(SettledFromTouched(), settled_before + 1) << "after: " << what << " the whole change set was scanned";
  }
};

TEST_F(SettleCountTest, TheCountAfterEachJobIsTheChangeSet) {
  BusMonitor monitor(kAlice, "settle-count-" + id_);
  ASSERT_TRUE(monitor.Ready()) << monitor.Text();
  JobThenCount(monitor, "a first job, which starts the feed", "echo new > new.txt", false);
  JobThenCount(monitor, "nothing", "true", true);
  JobThenCount(monitor, "a live file appended to", "echo more >> edit.txt", true);
  JobThenCount(monitor, "a file copied up unchanged (opened for writing, not written)",
               "python3 -c 'import os; os.close(os.open(\"keep.txt\", os.O_RDWR))'", true);
  JobThenCount(monitor, "that file changed through a mapping, no write(2)",
               "python3 -c 'import mmap, os\nf = os.open(\"keep.txt\", os.O_RDWR)\nm = mmap.mmap(f, 4)\nos.close(f)\nm[0:1] = b\"K\"\nm.close()'", true);
  JobThenCount(monitor, "a file written back as the live tree has it", "echo edit > edit.txt", true);
  JobThenCount(monitor, "a mode", "chmod 755 mode.sh", true);
  JobThenCount(monitor, "a live file removed", "rm dir/a", true);
  JobThenCount(monitor, "a live directory removed with what it holds", "rm -r tree", false);
  JobThenCount(monitor, "a directory made where the live one was", "mkdir tree && echo new > tree/fresh.txt", false);
  JobThenCount(monitor, "a new directory with entries", "mkdir -p gen/sub && echo 1 > gen/one && echo 2 > gen/sub/two", true);
  JobThenCount(monitor, "that directory moved with its entries", "mv gen moved", false);
  JobThenCount(monitor, "the moved directory's entries removed", "rm -r moved", true);
  JobThenCount(monitor, "one name of a hard link appended to", "echo x >> h1", false);
  JobThenCount(monitor, "the root's own mode", "chmod 700 .", true);
  JobThenCount(monitor, "a job that asked for no feed", "echo quiet > quiet.txt", true, {"--no-live-feed"});
  JobThenCount(monitor, "a job after it", "rm quiet.txt", true);
  Result committed = Ctl({"commit", "--all", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  JobThenCount(monitor, "a job after a commit", "echo after > after-commit.txt", false);
  JobThenCount(monitor, "and one more", "echo again >> after-commit.txt && rm -f edit.txt", true);
  Result discarded = Ctl({"discard", id_});
  ASSERT_EQ(discarded.status, 0) << discarded.err;
  JobThenCount(monitor, "a job after a discard", "echo d > discard.txt", false);
  JobThenCount(monitor, "and one more after it", "echo e >> discard.txt && echo f > keep.txt", true);
}

}  // namespace
}  // namespace sandboxd::it
