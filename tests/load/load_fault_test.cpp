// The load and fault test of issue 18: eight unprivileged users run jobs, diffs, approvals,
// commits and undos at once against one daemon for a fixed time (LOAD_SECONDS, default 60),
// while the daemon is SIGKILLed and started again three times and one user's store file system
// (a small tmpfs holding that user's project and, through its storage area, the sandbox's
// layers) is filled to ENOSPC once. Each user keeps a model of their live tree: a call that
// succeeded must have done exactly what it says, and one cut off by a kill or refused for want
// of space must have done all of it or nothing (never half). Afterwards every sandbox is
// listed, every live tree equals its model, and the daemon's threads and memory are back under
// stated bounds. It prints its figures (bench/load-fault runs it longer).

#include <dirent.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace sandboxd::it {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Tree = std::map<std::string, std::string>;

constexpr int kUsers = 8;
/// Where the daemon must be once the load is over (it was at 21 threads and ~15 MiB idle).
constexpr int kMostThreadsAfter = 32;
constexpr long kMostRssKibAfter = 96 * 1024;

/// What the run did, for the figures and the verdict.
struct Tally {
  std::atomic<int> runs{0}, diffs{0}, approvals{0}, commits{0}, undos{0};
  std::atomic<int> cut_by_kill{0};   ///< calls that failed because the daemon was killed under them
  std::atomic<int> kept_whole{0};    ///< of those commits and undos: done whole after the restart
  std::atomic<int> out_of_space{0};  ///< calls that failed while the store was full (jobs' writes included)
  std::mutex mutex;
  std::vector<std::string> problems;
  void Problem(const std::string& what) {
    char stamp[32];
    time_t now = time(nullptr);
    strftime(stamp, sizeof stamp, "%H:%M:%S ", localtime(&now));
    std::lock_guard lock(mutex);
    problems.push_back(stamp + what);
  }
};

/// The faults, as the users' workers see them: how many kills so far, whether the daemon is
/// down now, whether the small store is full now.
struct Faults {
  std::atomic<int> kills{0};
  std::atomic<bool> down{false};
  std::atomic<bool> full{false};
};

/// What Snapshot() shows of a tree, printed by a program (run as a job: a sandbox's view is
/// what its jobs see) as records of "path NUL size NUL value".
constexpr const char* kWalk = R"(
import os, stat, sys
top, out = sys.argv[1], sys.stdout.buffer
def emit(path, value):
    out.write(path.encode("utf-8", "surrogateescape") + b"\0" + str(len(value)).encode() + b"\0" + value)
for root, dirs, files in os.walk(top):
    for name in dirs + files:
        path = os.path.join(root, name)
        st = os.lstat(path)
        value = ("%o uid=%d" % (st.st_mode, st.st_uid)).encode()
        if stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                value += b" " + f.read()
        if stat.S_ISLNK(st.st_mode):
            value += b" -> " + os.fsencode(os.readlink(path))
        emit(path[len(top):], value)
emit(".", ("%o" % os.lstat(top).st_mode).encode())
)";

std::optional<Tree> ParseWalk(const std::string& out) {
  Tree tree;
  for (size_t at = 0; at < out.size();) {
    size_t name_end = out.find('\0', at), size_end = out.find('\0', name_end + 1);
    if (name_end == std::string::npos || size_end == std::string::npos) return std::nullopt;
    size_t size = std::stoul(out.substr(name_end + 1, size_end - name_end - 1));
    tree[out.substr(at, name_end - at)] = out.substr(size_end + 1, size);
    at = size_end + 1 + size;
  }
  if (!tree.count(".")) return std::nullopt;
  return tree;
}

/// What the daemon holds of sandbox `id` now, for a failure no fault explains (CI shows a
/// failure's first lines, and the state may not last): its upper layer's root as the kernel has
/// it (the merged view's root takes its owner and mode), whether its merged view is mounted in
/// the daemon's namespace, and the daemon's last lines about it.
std::string SandboxStateNow(const std::string& id, const std::string& store) {
  std::string said;
  const std::string upper = store + "/sandboxes/" + id + "/upper/0";
  struct stat st;
  if (lstat(upper.c_str(), &st) == 0)
    said += "upper root " + upper + ": uid " + std::to_string(st.st_uid) + " gid " + std::to_string(st.st_gid) + " mode " +
            std::to_string(st.st_mode & 07777) + " (decimal)";
  else
    said += "upper root " + upper + ": " + std::strerror(errno);
  std::ifstream mounts("/proc/" + std::to_string(World().daemon_pid()) + "/mountinfo");
  int mounted = 0;
  for (std::string line; std::getline(mounts, line);)
    if (line.find("/" + id + "/") != std::string::npos) {
      said += "\n  mounted: " + line;
      ++mounted;
    }
  if (mounted == 0) said += "\n  nothing of it is mounted in the daemon's namespace";
  std::vector<std::string> about;
  std::istringstream log(World().DaemonLog());
  for (std::string line; std::getline(log, line);)
    if (line.find(id) != std::string::npos || line.find("ready on") != std::string::npos) about.push_back(line);
  said += "\n  the daemon's last lines about it:";
  for (size_t i = about.size() > 12 ? about.size() - 12 : 0; i < about.size(); ++i) said += "\n    " + about[i];
  return said;
}

class LoadUser {
 public:
  LoadUser(std::string user, std::string project, std::string sandbox, std::string store, unsigned seed, bool small_store,
           Faults& faults, Tally& tally)
      : user_(std::move(user)), project_(std::move(project)), id_(std::move(sandbox)), store_(std::move(store)), random_(seed),
        small_store_(small_store), faults_(faults), tally_(tally), live_(Snapshot(project_)) {}

  void RunUntil(Clock::time_point deadline) {
    while (Clock::now() < deadline) {
      unsigned pick = random_() % 10;
      if (pick < 4) Job();
      else if (pick == 4) Diff();
      else if (pick == 5) ApproveOneAndCommit();
      else if (pick < 8) CommitAll();
      else Undo();
    }
  }

  /// After the load: the live tree is what the model says.
  void Check() const {
    Tree now = Snapshot(project_);
    if (now != live_)
      tally_.Problem(user_ + ": the live tree is not what its calls said:\nexpected\n" + Describe(live_) + "\nfound\n" + Describe(now));
    Result listed = World().Sandboxctl(user_, {"list"});
    if (listed.out.find(id_) == std::string::npos) tally_.Problem(user_ + ": sandbox " + id_ + " is not listed: " + listed.out + listed.err);
  }

  const std::string& id() const { return id_; }
  const std::string& user() const { return user_; }

 private:
  /// Runs one sandboxctl call; on failure, tells whether the daemon was killed under it (then
  /// it waits for the daemon to be back before returning).
  struct Outcome {
    Result result;
    bool killed = false;
    bool full = false;
  };
  Outcome Call(const std::vector<std::string>& args) {
    while (faults_.down) std::this_thread::sleep_for(50ms);
    int kills_before = faults_.kills;
    bool full_before = faults_.full;
    Outcome outcome;
    outcome.result = World().Sandboxctl(user_, args, {.cwd = project_});
    // Full while it ran, by the fault or by what the user's own commits keep for undo there.
    // A job's shell (dash) reports any failed write of a builtin as "I/O error": that one counts
    // as full when the store has next to no room left (only this user's calls change it).
    outcome.full = small_store_ && (full_before || faults_.full ||
                                    outcome.result.err.find("No space left on device") != std::string::npos ||
                                    (outcome.result.err.find("I/O error") != std::string::npos && StoreAlmostFull()));
    if (outcome.result.status != 0 && (faults_.down || faults_.kills != kills_before)) {
      outcome.killed = true;
      ++tally_.cut_by_kill;
      while (faults_.down) std::this_thread::sleep_for(50ms);
    }
    return outcome;
  }

  /// Whether the store of the project has less room left than a job's smallest write needs
  /// (a page, and some for its metadata).
  bool StoreAlmostFull() const {
    struct statvfs vfs;
    return statvfs(project_.c_str(), &vfs) == 0 && uint64_t{vfs.f_bavail} * vfs.f_frsize < (256u << 10);
  }

  /// A failure neither a kill nor a full store explains is a defect.
  bool Explained(const Outcome& outcome, const std::string& what) {
    if (outcome.result.status == 0 || outcome.killed) return true;
    if (outcome.full) {
      ++tally_.out_of_space;
      return true;
    }
    tally_.Problem(user_ + ": " + what + " failed (" + std::to_string(outcome.result.status) + "): " + outcome.result.err + "\n  " +
                   SandboxStateNow(id_, store_));
    return false;
  }

  /// The sandbox's view of the project, as a job sees it; nullopt if the daemon was killed
  /// under the job.
  std::optional<Tree> View() {
    Outcome walked = Call({"run", id_, "--", "python3", "-c", kWalk, project_});
    if (walked.result.status != 0) {
      Explained(walked, "the walk of the sandbox's view");
      return std::nullopt;
    }
    return ParseWalk(walked.result.out);
  }

  void Job() {
    // A few files written, rewritten or removed, and a line added to a file of the project.
    std::string script;
    for (int i = 0, n = 1 + static_cast<int>(random_() % 3); i < n; ++i) {
      std::string name = "f" + std::to_string(random_() % 6) + ".txt";
      if (random_() % 4 == 0) script += "rm -f " + name + "; ";
      else script += "echo " + std::to_string(random_()) + " > " + name + "; ";
    }
    if (random_() % 3 == 0) script += "echo " + std::to_string(random_()) + " >> b.txt; ";
    if (small_store_ && random_() % 5 == 0) script += "head -c " + std::to_string((random_() % 4 + 1) << 20) + " /dev/urandom > blob.bin; ";
    ++tally_.runs;
    Outcome outcome = Call({"run", id_, "--", "sh", "-c", script});
    // The script's commands fail only for want of space (counted), so any other failure is the
    // daemon's (sandboxctl's refusals exit 1 too) and a problem.
    Explained(outcome, "job `" + script + "`");
  }

  void Diff() {
    ++tally_.diffs;
    Explained(Call({"diff", id_}), "diff");
  }

  /// `expected` is the live tree if the call does what it says; a call that failed did all of
  /// it or nothing. True when it was done.
  bool Settle(const Outcome& outcome, const Tree& expected, const std::string& what) {
    Tree now = Snapshot(project_);
    if (outcome.result.status == 0) {
      if (now != expected)
        tally_.Problem(user_ + ": " + what + " succeeded but the live tree is not what it said:\nexpected\n" + Describe(expected) +
                       "\nfound\n" + Describe(now));
      live_ = now;
      return true;
    }
    Explained(outcome, what);
    if (now == live_) return false;
    if (now == expected) {
      ++tally_.kept_whole;
      live_ = now;
      return true;
    }
    tally_.Problem(user_ + ": " + what + " failed and left the live tree half changed:\nbefore\n" + Describe(live_) + "\nafter\n" +
                   Describe(expected) + "\nfound\n" + Describe(now) + "\nerror: " + outcome.result.err);
    live_ = now;
    return false;
  }

  void CommitAll() {
    ++tally_.commits;
    Tree before = live_;
    std::optional<Tree> view = View();
    if (!view) return;
    Tree expected = *view;
    // A commit that changed nothing leaves no commit to undo.
    if (Settle(Call({"commit", id_, "--all"}), expected, "commit --all") && live_ != before) undo_.push_back(before);
  }

  void ApproveOneAndCommit() {
    std::optional<Tree> view = View();
    if (!view) return;
    Tree merged = *view;
    // One top-level file that differs, whole.
    std::vector<std::string> differing;
    for (const auto& [path, value] : merged)
      if (path.find('/', 1) == std::string::npos && value.rfind("100", 0) == 0 && (!live_.count(path) || live_.at(path) != value))
        differing.push_back(path);
    if (differing.empty()) return;
    std::string path = differing[random_() % differing.size()];
    ++tally_.approvals;
    Outcome approved = Call({"approve", id_, path.substr(1)});
    if (approved.result.status != 0) {
      Explained(approved, "approve " + path);
      return;
    }
    ++tally_.commits;
    Tree before = live_, expected = live_;
    expected[path] = merged[path];
    if (Settle(Call({"commit", id_, path.substr(1)}), expected, "commit of approved " + path) && live_ != before) undo_.push_back(before);
  }

  void Undo() {
    if (undo_.empty()) return;
    ++tally_.undos;
    if (Settle(Call({"undo", id_}), undo_.back(), "undo")) undo_.pop_back();
  }

  const std::string user_, project_, id_;
  const std::string store_;  ///< the storage area holding the sandbox's layers
  std::mt19937 random_;
  const bool small_store_;
  Faults& faults_;
  Tally& tally_;
  Tree live_;               ///< the model: what the live tree is
  std::vector<Tree> undo_;  ///< the live tree before each commit not undone yet
};

class LoadFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { SANDBOXD_REQUIRE_WORLD(); }
  void TearDown() override {
    for (const auto& user : users_) World().Sandboxctl(user->user(), {"destroy", user->id()});
    if (!small_.empty()) {
      umount2(small_.c_str(), MNT_DETACH);
      rmdir(small_.c_str());
    }
  }
  std::vector<std::unique_ptr<LoadUser>> users_;
  std::string small_;
};

TEST_F(LoadFaultTest, EightUsersKillsAndAFullStoreLoseNothing) {
  const char* seconds_env = std::getenv("LOAD_SECONDS");
  const int seconds = seconds_env ? std::atoi(seconds_env) : 60;
  const unsigned seed = std::getenv("LOAD_SEED") ? static_cast<unsigned>(std::atoi(std::getenv("LOAD_SEED"))) : std::random_device{}();
  std::fprintf(stderr, "load: %d users for %d s, seed %u (LOAD_SEED=%u to repeat the users' choices)\n", kUsers, seconds, seed, seed);

  // The last user's project and store live on a small file system of their own.
  small_ = World().dir() + "/small";
  ASSERT_EQ(mkdir(small_.c_str(), 0755), 0);
  ASSERT_EQ(mount("tmpfs", small_.c_str(), "tmpfs", 0, "size=24m,mode=0755"), 0) << strerror(errno);
  Faults faults;
  Tally tally;
  for (int i = 0; i < kUsers; ++i) {
    std::string user = "sbxtest-load" + std::to_string(i + 1);
    ASSERT_TRUE(EnsureUser(user)) << user;
    std::string project;
    if (i == kUsers - 1) {
      passwd* pw = getpwnam(user.c_str());
      std::string top = small_ + "/" + user;
      ASSERT_EQ(mkdir(top.c_str(), 0755), 0);
      ASSERT_EQ(chown(top.c_str(), pw->pw_uid, pw->pw_gid), 0);
      project = top + "/proj";
      Result made = World().RunAs(user, {"sh", "-c", "mkdir '" + project + "' && cd '" + project + "' && printf '1\\n2\\n' > b.txt"});
      ASSERT_EQ(made.status, 0) << made.err;
    } else {
      project = World().MakeProject(user);
    }
    Result created = World().Sandboxctl(user, {"create", project});
    ASSERT_EQ(created.status, 0) << created.err;
    std::string id = created.out.substr(0, created.out.find('\n'));
    const std::string store = i == kUsers - 1 ? small_ + "/.sandboxd" : World().dir() + "/state";
    users_.push_back(std::make_unique<LoadUser>(user, project, id, store, seed + i, i == kUsers - 1, faults, tally));
  }

  const pid_t first_daemon = World().daemon_pid();
  const int threads_before = ThreadsOf(first_daemon);
  const long rss_before = RssKibOf(first_daemon);
  const auto started = Clock::now();
  const auto deadline = started + std::chrono::seconds(seconds);
  std::vector<std::thread> workers;
  for (auto& user : users_) workers.emplace_back([&user, deadline] { user->RunUntil(deadline); });

  // The faults, at fixed points of the run: kills at 20%, 45% and 75%; the store full from 55%
  // to 65%.
  int peak_threads = 0;
  long peak_rss = 0;
  auto at = [&](double fraction) { return started + std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000 * fraction)); };
  auto watch_until = [&](Clock::time_point until) {
    while (Clock::now() < until) {
      peak_threads = std::max(peak_threads, ThreadsOf(World().daemon_pid()));
      peak_rss = std::max(peak_rss, RssKibOf(World().daemon_pid()));
      std::this_thread::sleep_for(200ms);
    }
  };
  auto kill_and_restart = [&] {
    faults.down = true;
    ++faults.kills;
    World().KillDaemon();
    bool up = World().StartDaemon();
    faults.down = false;
    std::fprintf(stderr, "load: kill %d done, sandboxd running again\n", faults.kills.load());
    if (!up) tally.Problem("sandboxd did not start again after kill " + std::to_string(faults.kills) + ": " + World().DaemonLog());
  };
  watch_until(at(0.20));
  kill_and_restart();
  watch_until(at(0.45));
  kill_and_restart();
  watch_until(at(0.55));
  // Filled from outside the sandbox, as another program of the machine would.
  faults.full = true;
  std::string filler = small_ + "/filler";
  World().RunAs("root", {"sh", "-c", "head -c 100000000 /dev/zero > '" + filler + "' 2>/dev/null; true"});
  watch_until(at(0.65));
  unlink(filler.c_str());
  std::this_thread::sleep_for(1s);  // calls that started while it was full are still judged so
  faults.full = false;
  watch_until(at(0.75));
  kill_and_restart();
  watch_until(deadline);
  for (auto& worker : workers) worker.join();
  const double took = std::chrono::duration<double>(Clock::now() - started).count();

  for (const auto& user : users_) user->Check();
  // Settled: what the load made the daemon take is given back.
  std::this_thread::sleep_for(3s);
  const int threads_after = ThreadsOf(World().daemon_pid());
  const long rss_after = RssKibOf(World().daemon_pid());
  std::fprintf(stderr,
               "load figures (%.0f s, %d users, seed %u):\n"
               "  calls: %d runs, %d diffs, %d approvals, %d commits, %d undos\n"
               "  faults: %d kills, store full once; %d calls cut by a kill (%d commits/undos found done whole after it), %d failed "
               "while the store was full\n"
               "  daemon threads: %d before, peak %d, %d after (bound %d)\n"
               "  daemon RSS: %ld KiB before, peak %ld KiB, %ld KiB after (bound %ld KiB)\n"
               "  problems: %zu\n",
               took, kUsers, seed, tally.runs.load(), tally.diffs.load(), tally.approvals.load(), tally.commits.load(),
               tally.undos.load(), faults.kills.load(), tally.cut_by_kill.load(), tally.kept_whole.load(), tally.out_of_space.load(),
               threads_before, peak_threads, threads_after, kMostThreadsAfter, rss_before, peak_rss, rss_after, kMostRssKibAfter,
               tally.problems.size());
  for (const auto& problem : tally.problems) ADD_FAILURE() << problem;
  EXPECT_LE(threads_after, kMostThreadsAfter);
  EXPECT_LE(rss_after, kMostRssKibAfter);
  EXPECT_GT(tally.commits.load(), 0);
}

}  // namespace
}  // namespace sandboxd::it
