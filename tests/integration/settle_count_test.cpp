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

#include <regex>
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

  /// How many ChangeSetChanged the monitor has heard, and the count the last one carried.
  static std::pair<size_t, long> Heard(const std::string& text) {
    static const std::regex signal(R"(ChangeSetChanged \(uint32 (\d+),\))");
    size_t heard = 0;
    long last = -1;
    for (std::sregex_iterator it(text.begin(), text.end(), signal), end; it != end; ++it, ++heard) last = std::stol((*it)[1]);
    return {heard, last};
  }

  /// Runs `script` as a job (with `flags` before the sandbox id), waits for the signal its end
  /// sends, and checks that it counts what a listing shows.
  void JobThenCount(const BusMonitor& monitor, const std::string& what, const std::string& script,
                    const std::vector<std::string>& flags = {}) {
    SCOPED_TRACE(what);
    size_t before = Heard(monitor.Text()).first;
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {id_, "--", "sh", "-c", script});
    Result run = Ctl(args);
    ASSERT_EQ(run.status, 0) << run.err;
    ASSERT_TRUE(WaitUntil([&] { return Heard(monitor.Text()).first > before; }, std::chrono::seconds(30))) << monitor.Text();
    std::string listing = Changes();
    long listed = static_cast<long>(std::count(listing.begin(), listing.end(), '\n'));
    EXPECT_EQ(Heard(monitor.Text()).second, listed) << "after: " << what << "\nthe change set:\n" << listing;
  }
};

TEST_F(SettleCountTest, TheCountAfterEachJobIsTheChangeSet) {
  BusMonitor monitor(kAlice, "settle-count-" + id_);
  ASSERT_TRUE(monitor.Ready()) << monitor.Text();
  JobThenCount(monitor, "a first job, which starts the feed", "echo new > new.txt");
  JobThenCount(monitor, "nothing", "true");
  JobThenCount(monitor, "a live file appended to", "echo more >> edit.txt");
  JobThenCount(monitor, "a file copied up unchanged (opened for writing, not written)",
               "python3 -c 'import os; os.close(os.open(\"keep.txt\", os.O_RDWR))'");
  JobThenCount(monitor, "that file changed through a mapping, no write(2)",
               "python3 -c 'import mmap, os\nf = os.open(\"keep.txt\", os.O_RDWR)\nm = mmap.mmap(f, 4)\nos.close(f)\nm[0:1] = b\"K\"\nm.close()'");
  JobThenCount(monitor, "a file written back as the live tree has it", "echo edit > edit.txt");
  JobThenCount(monitor, "a mode", "chmod 755 mode.sh");
  JobThenCount(monitor, "a live file removed", "rm dir/a");
  JobThenCount(monitor, "a live directory removed with what it holds", "rm -r tree");
  JobThenCount(monitor, "a directory made where the live one was", "mkdir tree && echo new > tree/fresh.txt");
  JobThenCount(monitor, "a new directory with entries", "mkdir -p gen/sub && echo 1 > gen/one && echo 2 > gen/sub/two");
  JobThenCount(monitor, "that directory moved with its entries", "mv gen moved");
  JobThenCount(monitor, "the moved directory's entries removed", "rm -r moved");
  JobThenCount(monitor, "one name of a hard link appended to", "echo x >> h1");
  JobThenCount(monitor, "the root's own mode", "chmod 700 .");
  JobThenCount(monitor, "a job that asked for no feed", "echo quiet > quiet.txt", {"--no-live-feed"});
  JobThenCount(monitor, "a job after it", "rm quiet.txt");
  Result committed = Ctl({"commit", "--all", id_});
  ASSERT_EQ(committed.status, 0) << committed.err;
  JobThenCount(monitor, "a job after a commit", "echo after > after-commit.txt");
  JobThenCount(monitor, "and one more", "echo again >> after-commit.txt && rm -f edit.txt");
  Result discarded = Ctl({"discard", id_});
  ASSERT_EQ(discarded.status, 0) << discarded.err;
  JobThenCount(monitor, "a job after a discard", "echo d > discard.txt");
  JobThenCount(monitor, "and one more after it", "echo e >> discard.txt && echo f > keep.txt");
}

}  // namespace
}  // namespace sandboxd::it
