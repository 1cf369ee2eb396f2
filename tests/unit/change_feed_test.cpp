// The live change feed: what is written into an upper layer is said within a period, each path
// once, with the kind it holds; a directory that appears is followed at once (what was made in
// it before its watch counts too); the last changes are said when the feed ends; writes made
// through a real overlay mount reach the upper's watches.

#include "jobs/change_feed.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/errors.h"
#include "unique_fd.h"
#include "runtime/file_clock.h"
#include "jobs/inotify_shares.h"
#include "jobs/upper_watch.h"
#include "temp_dir.h"
#include "myself.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;
using testing::ScopedTempDir;
using testing::WriteFile;

/// Collects what a feed says: each path's latest kind, and the announcements' count.
class Heard {
 public:
  SeenSink Sink() {
    return [this](const SeenChanges& seen) {
      std::lock_guard lock(mutex_);
      ++announcements_;
      more_ += seen.more;
      lost_ = lost_ || seen.lost;
      for (const auto& change : seen.listed) kinds_[std::to_string(change.root) + ":" + change.path] = change.kind;
      changed_.notify_all();
    };
  }
  /// The kind of `path` of root 0 once the feed has said it (waits up to 10 s); "" if never.
  std::string KindOf(const std::string& path, const std::string& wanted = "") {
    std::unique_lock lock(mutex_);
    std::string key = "0:" + path;
    changed_.wait_for(lock, 10s, [&] { return kinds_.count(key) && (wanted.empty() || kinds_[key] == wanted); });
    return kinds_.count(key) ? kinds_[key] : "";
  }
  std::map<std::string, std::string> Kinds() {
    std::lock_guard lock(mutex_);
    return kinds_;
  }
  size_t announcements() {
    std::lock_guard lock(mutex_);
    return announcements_;
  }
  size_t more() {
    std::lock_guard lock(mutex_);
    return more_;
  }
  /// Whether the feed has said it lost changes (waits up to 10 s for it).
  bool Lost() {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, 10s, [&] { return lost_; });
    return lost_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> kinds_;
  size_t announcements_ = 0;
  size_t more_ = 0;
  bool lost_ = false;
};

class ChangeFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkdir((dir_ / "live").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ / "upper").c_str(), 0755), 0);
  }
  std::string Live(const std::string& path) { return dir_ / ("live/" + path); }
  std::string Upper(const std::string& path) { return dir_ / ("upper/" + path); }
  /// With `merged`, a directory stands for the merged view (nothing is written through it here):
  /// without one a feed never tells a whole take.
  std::unique_ptr<ChangeFeed> Start(std::chrono::milliseconds period = 50ms, bool merged = false) {
    std::vector<FeedRoot> roots;
    UniqueFd merged_fd;
    if (merged) {
      EXPECT_EQ(mkdir((dir_ / "merged").c_str(), 0755), 0);
      merged_fd.reset(open((dir_ / "merged").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    }
    roots.push_back({UniqueFd(open(Live("").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
                     UniqueFd(open(Upper("").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)), std::move(merged_fd)});
    auto feed = std::make_unique<ChangeFeed>(std::move(roots), testing::Myself(), heard_.Sink(), period);
    feed->JobStarted();  // a job listens
    return feed;
  }
  ScopedTempDir dir_;
  Heard heard_;
};

TEST_F(ChangeFeedTest, WhatIsWrittenIsSaidWithItsKindWhileItGoesOn) {
  WriteFile(Live("app.c"), "int main() {}\n");
  WriteFile(Upper("app.c"), "int main() {}\n");  // copied up before the feed, untouched
  auto feed = Start();
  WriteFile(Upper("new.txt"), "new\n");
  EXPECT_EQ(heard_.KindOf("new.txt"), "added");
  WriteFile(Upper("app.c"), "int main() { return 1; }\n");
  // (Written in the file clock's tick of the feed's start, app.c may be said unchanged first:
  // the feed cannot tell that write from one made after it began, and looks.)
  EXPECT_EQ(heard_.KindOf("app.c", "modified"), "modified");
  chmod(Upper("new.txt").c_str(), 0600);  // still added: the live tree has no new.txt
  ASSERT_EQ(unlink(Upper("new.txt").c_str()), 0);
  EXPECT_EQ(heard_.KindOf("new.txt", "unchanged"), "unchanged") << "made and removed again";
  // Written back as it was: no longer differs.
  WriteFile(Upper("app.c"), "int main() {}\n");
  EXPECT_EQ(heard_.KindOf("app.c", "unchanged"), "unchanged");
}

// A job makes a directory and fills it at once, deeper than one level, before any watch on it
// can be in place: everything in it is said all the same.
TEST_F(ChangeFeedTest, ADirectoryFilledAsItIsMadeIsFollowedWhole) {
  auto feed = Start();
  ASSERT_EQ(mkdir(Upper("a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(Upper("a/b").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(Upper("a/b/c").c_str(), 0755), 0);
  WriteFile(Upper("a/b/c/deep.txt"), "deep\n");
  EXPECT_EQ(heard_.KindOf("a/b/c/deep.txt"), "added");
  EXPECT_EQ(heard_.KindOf("a"), "added");
  // A file written later in the directory made first: its watch is in place.
  WriteFile(Upper("a/later.txt"), "later\n");
  EXPECT_EQ(heard_.KindOf("a/later.txt"), "added");
  // A directory moved: what is written in it is said at its new path.
  ASSERT_EQ(rename(Upper("a/b").c_str(), Upper("moved").c_str()), 0);
  WriteFile(Upper("moved/c/after-move.txt"), "x\n");
  EXPECT_EQ(heard_.KindOf("moved/c/after-move.txt"), "added");
}

// What the last job did just before it ended is said as the feed ends, not lost with it.
TEST_F(ChangeFeedTest, TheLastChangesAreSaidWhenTheFeedEnds) {
  auto feed = Start(10s);  // no period would end before the test does
  WriteFile(Upper("last.txt"), "last\n");
  feed.reset();
  EXPECT_EQ(heard_.Kinds()["0:last.txt"], "added");
  EXPECT_EQ(heard_.announcements(), 1u);
}

// Many paths in one period: each said once, at most kMaxListed of them listed, the rest counted.
TEST_F(ChangeFeedTest, AFloodIsListedUpToTheLimitAndTheRestCounted) {
  auto feed = Start(10s);
  const size_t files = ChangeFeed::kMaxListed + 234;
  for (size_t i = 0; i < files; ++i) WriteFile(Upper("f" + std::to_string(i)), "x");
  for (size_t i = 0; i < 5; ++i) WriteFile(Upper("f0"), "again");  // touched often, said once
  feed.reset();
  EXPECT_EQ(heard_.Kinds().size(), ChangeFeed::kMaxListed);
  EXPECT_EQ(heard_.more(), files - ChangeFeed::kMaxListed);
  EXPECT_EQ(heard_.announcements(), 1u);
}

// The layers are walked beside a job that already writes: what a directory holds is told when
// the directory changed since the feed began (it may have been filled before its watch), not
// when it changed before.
TEST_F(ChangeFeedTest, TheWalkTellsWhatChangedSinceTheFeedBeganOnly) {
  ASSERT_EQ(mkdir(Upper("old").c_str(), 0755), 0);
  WriteFile(Upper("old/kept.txt"), "k");
  std::this_thread::sleep_for(30ms);  // a few ticks of the file clock
  const int64_t began = FileClockNowNs();
  ASSERT_EQ(mkdir(Upper("new").c_str(), 0755), 0);
  WriteFile(Upper("new/made.txt"), "m");
  UniqueFd upper(open(Upper("").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::set<std::string> told;
  UpperWatch watch(upper.get(), 0, began, [&](const std::string& path) { told.insert(path); });
  EXPECT_TRUE(told.count("new")) << "the layer's top changed since";
  EXPECT_TRUE(told.count("new/made.txt"));
  EXPECT_FALSE(told.count("old/kept.txt"));
  EXPECT_EQ(watch.watched(), 3u);
}

// What a job touched is held from one settling to the next, and a job names the paths (each up
// to PATH_MAX): past kMaxTouchedBytes the feed holds none of them and says the next take is not
// whole (that settling scans it all), rather than hold whatever a job makes it. Under the cap a
// take is whole and names each path.
TEST_F(ChangeFeedTest, LongPathsPastTheCapAreNotHeldAndTheTakeIsNotWhole) {
  auto feed = Start(10s, /*merged=*/true);
  feed->TakeTouched();  // the first take covers the walk, and is never whole
  std::string deep;
  for (int level = 0; level < 15; ++level) {
    deep += (deep.empty() ? "" : "/") + std::string(250, static_cast<char>('a' + level));
    ASSERT_EQ(mkdir(Upper(deep).c_str(), 0755), 0) << strerror(errno);
  }
  WriteFile(Upper("short.txt"), "x");
  TouchedPaths under = feed->TakeTouched();
  EXPECT_TRUE(under.whole);
  EXPECT_TRUE(under.paths[0].count("short.txt"));
  EXPECT_TRUE(under.paths[0].count(deep));
  // About 3,900 bytes a path: 2,300 of them are past 8 MiB.
  for (int i = 0; i < 2300; ++i) WriteFile(Upper(deep + "/" + std::string(200, 'f') + std::to_string(i)), "");
  TouchedPaths over = feed->TakeTouched();
  EXPECT_FALSE(over.whole);
  EXPECT_TRUE(over.followed) << "the feed follows the layers still";
  EXPECT_TRUE(over.paths[0].empty());
  WriteFile(Upper("after.txt"), "x");
  TouchedPaths again = feed->TakeTouched();
  EXPECT_TRUE(again.whole) << "the take after starts whole again";
  EXPECT_EQ(again.paths[0], (std::set<std::string>{"after.txt"}));
}

// The kernel's inotify instances are per user, root's shared with every service running as
// root: sandboxd takes at most a quarter of them, and each user whose layers it follows at most
// a quarter of that (issue 40: one user's sandboxes took the feed from everyone). A layer past
// its owner's share is not followed (its jobs run all the same) until one is given back, and
// other users' layers are followed meanwhile.
TEST_F(ChangeFeedTest, EachUserTakesAtMostAQuarterOfTheDaemonsShareOfInotify) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the daemon's share is counted against uid 0, whose instances only root makes";
  size_t limit = 0;
  std::ifstream("/proc/sys/fs/inotify/max_user_instances") >> limit;
  if (limit < 16 || limit > 4096) GTEST_SKIP() << "max_user_instances is " << limit;
  UniqueFd upper(open(Upper("").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::vector<std::unique_ptr<UpperWatch>> held;
  try {
    while (held.size() <= limit / 4) held.push_back(std::make_unique<UpperWatch>(upper.get(), 0, 0, nullptr));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kBusy);
    EXPECT_NE(std::string(e.what()).find("of uid 0's"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("max_user_instances"), std::string::npos) << e.what();
  }
  EXPECT_EQ(held.size(), limit / 4 / 4);
  // A feed that cannot follow the sandbox at all says so once: lost, with no paths.
  auto feed = Start();
  EXPECT_TRUE(heard_.Lost()) << "a feed past the cap said nothing";
  EXPECT_TRUE(heard_.Kinds().empty());
  EXPECT_NO_THROW(UpperWatch(upper.get(), 4242, 0, nullptr)) << "another user's share was taken";
  feed.reset();
  held.pop_back();
  EXPECT_NO_THROW(UpperWatch(upper.get(), 0, 0, nullptr)) << "an instance given back is free again";
}

// The shares themselves: the daemon's whole, each user's quarter, what is given back free again.
TEST(InotifySharesTest, AUserTakesAQuarterAndTheDaemonNoMoreThanItsShare) {
  InotifyShares shares(8, 100);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(shares.TakeInstance(1));
  EXPECT_FALSE(shares.TakeInstance(1)) << "past a quarter";
  for (uid_t user = 2; user <= 4; ++user)
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(shares.TakeInstance(user));
  EXPECT_FALSE(shares.TakeInstance(5)) << "past the daemon's share";
  shares.GiveInstance(1);
  EXPECT_TRUE(shares.TakeInstance(5));
  for (int i = 0; i < 25; ++i) EXPECT_TRUE(shares.TakeWatch(1));
  EXPECT_FALSE(shares.TakeWatch(1));
  EXPECT_TRUE(shares.TakeWatch(2));
  shares.GiveWatches(1, 25);
  EXPECT_TRUE(shares.TakeWatch(1));
}

// A job may replace a directory it was writing in with a symlink to somewhere else: the feed
// looks beneath the layer without following it, and says nothing of what is out there. (End to
// end, and the timing of the feed's walk decides whether d/secret was ever seen: the rule
// itself is attacked deterministically in ScannerTest.OnePathIsLookedAtBeneathTheRootsWithoutSymlinks.)
TEST_F(ChangeFeedTest, ASymlinkSwappedForADirectoryIsNotFollowed) {
  ScopedTempDir elsewhere;
  WriteFile(elsewhere / "secret", "s");
  auto feed = Start(10s);
  ASSERT_EQ(mkdir(Upper("d").c_str(), 0755), 0);
  WriteFile(Upper("d/secret"), "s");
  ASSERT_EQ(unlink(Upper("d/secret").c_str()), 0);
  ASSERT_EQ(rmdir(Upper("d").c_str()), 0);
  ASSERT_EQ(symlink(elsewhere.path().c_str(), Upper("d").c_str()), 0);
  feed.reset();
  auto kinds = heard_.Kinds();
  EXPECT_EQ(kinds["0:d"], "added");  // the symlink itself
  EXPECT_NE(kinds["0:d/secret"], "added") << "the feed looked through the symlink";
}

// The feed's premise: a write made through an overlay mount reaches the upper layer's watches.
TEST_F(ChangeFeedTest, WritesThroughAnOverlayMountAreSeen) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting an overlay needs root";
  ASSERT_EQ(mkdir((dir_ / "work").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir_ / "merged").c_str(), 0755), 0);
  WriteFile(Live("kept.txt"), "kept\n");
  WriteFile(Live("gone.txt"), "gone\n");
  std::string options = "lowerdir=" + Live("") + ",upperdir=" + Upper("") + ",workdir=" + (dir_ / "work") +
                        ",redirect_dir=off,metacopy=off";
  ASSERT_EQ(mount("overlay", (dir_ / "merged").c_str(), "overlay", 0, options.c_str()), 0) << strerror(errno);
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{dir_ / "merged"};
  auto feed = Start();
  WriteFile(dir_ / "merged/made.txt", "made\n");
  EXPECT_EQ(heard_.KindOf("made.txt"), "added");
  WriteFile(dir_ / "merged/kept.txt", "changed\n");  // copied up, then written
  EXPECT_EQ(heard_.KindOf("kept.txt", "modified"), "modified");
  ASSERT_EQ(unlink((dir_ / "merged/gone.txt").c_str()), 0);  // a whiteout in the upper
  EXPECT_EQ(heard_.KindOf("gone.txt"), "deleted");
  ASSERT_EQ(mkdir((dir_ / "merged/sub").c_str(), 0755), 0);
  WriteFile(dir_ / "merged/sub/inner.txt", "inner\n");
  EXPECT_EQ(heard_.KindOf("sub/inner.txt"), "added");
}

}  // namespace
}  // namespace sandboxd
