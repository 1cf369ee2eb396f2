#pragma once
/// What the jobs of a sandbox change, followed as it happens: the live change feed, and the
/// paths touched since the sandbox last settled (job_settling.h).
///
/// The feed: while a sandbox's jobs run, what they change is said at most once a period
/// (250 ms), each path once however often it was touched meanwhile, with the kind of change it
/// holds at that moment. A desktop app shows "the agent is editing src/app.c" from it; the
/// change set itself (GetChanges, after ChangeSetChanged) stays the account to act on.
///
/// One per sandbox (ChangeFeeds), made by the first job that asks for the feed and kept between
/// its jobs, so that a job's start never walks the layers again and a job's end looks at what
/// it touched alone (the walk and a full settling grow with the change set; issue 41). It is
/// let go when an exclusive operation (commit, undo, discard, suspend, destroy) is about to
/// change the layers under it. It watches the upper layers (upper_watch.h) and looks at each
/// touched path beneath both roots as the change-set scan would (ScanOnePath), on a thread of
/// its own: the job never waits for it.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"
#include "jobs/known_changes.h"
#include "jobs/upper_watch.h"

namespace sandboxd {

class Sandbox;

/// One path a job changed: its root's index, its path beneath the root (bytes, as the job named
/// it) and the kind of change it holds now: the contract's words (added, modified, deleted,
/// type-changed, mode-changed), or "unchanged" when it no longer differs from the live tree (a
/// file made and removed again, one written back as it was).
struct SeenChange {
  size_t root = 0;
  std::string path;
  std::string kind;
};

/// What one announcement says: at most ChangeFeed::kMaxListed paths (in path order), how many
/// more were touched in the same period, and whether some were missed (the kernel's event
/// queue overflowed, or a directory could not be watched).
struct SeenChanges {
  std::vector<SeenChange> listed;
  size_t more = 0;
  bool lost = false;
};

using SeenSink = std::function<void(const SeenChanges&)>;

/// The sides of one root: the live directory, the sandbox's upper layer, and its mounted
/// overlay (none in user mode, where each job mounts its own: writes through a mapping of a
/// file already in the upper go unseen there, and each settling scans the whole change set).
struct FeedRoot {
  UniqueFd live;
  UniqueFd upper;
  UniqueFd merged;
};

/// The paths of each root touched since the last TakeTouched (or since the feed began).
struct TouchedPaths {
  std::vector<std::set<std::string>> paths;  ///< per root, in byte order
  /// Every change made to the upper layers since the last take is among `paths`: the feed
  /// followed the whole of every layer all along (no lost event, no directory left unwatched,
  /// no directory moved away with its entries' old paths untold, not too many paths to hold).
  bool whole = false;
  /// Every change made from now on will be among the next take's paths (unless one is lost).
  bool followed = false;
  /// A name was removed or moved away (overlayfs may have left a whiteout in its index).
  bool removed = false;
};

class ChangeFeed {
 public:
  static constexpr size_t kMaxListed = 1000;
  /// Same-size files larger than this are called modified without reading both (a job
  /// rewriting a large file would otherwise have it read every period).
  static constexpr uint64_t kCompareLimit = 256 * 1024;

  /// Paths held for the next take at most, and bytes of them (a job names them, each up to
  /// PATH_MAX, and they are held until its end): past either the take is not whole (a job that
  /// touched more is settled by a full scan, which costs no more than looking at each).
  static constexpr size_t kMaxTouched = 50000;
  static constexpr size_t kMaxTouchedBytes = 8u << 20;

  /// Starts following `roots` (on the feed's own thread, which `sink` is called on); a feed
  /// that cannot follow them (no inotify) logs why, says so to the jobs that listen (lost) and
  /// is failed(). The live side of each touched path is looked at with `owner`'s eyes, as the
  /// change set's scan does.
  ChangeFeed(std::vector<FeedRoot> roots, const UserCredentials& owner, SeenSink sink, std::chrono::milliseconds period);
  /// Says what is left if a job still listens, then ends the thread.
  ~ChangeFeed();

  /// A job that listens starts: what changes is said from now on, every period.
  void JobStarted();
  /// That job ended: everything queued by now (it made its last change before) is said before
  /// this returns; with no job left listening, the feed falls silent.
  void JobEnded();
  /// What was touched since the last take, everything queued by now included (waits for the
  /// walk of the layers, which runs on the feed's thread).
  TouchedPaths TakeTouched();
  /// Which paths hold a change as of the last settling, for the settling alone (one runs at a
  /// time per sandbox); empty unless a full scan began while the feed followed the layers.
  std::optional<KnownChanges>& known() { return known_; }
  /// Could not follow the layers at all.
  bool failed() const;
  /// No job listens.
  bool idle() const;
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

 private:
  /// The thread: walks the layers (what changed from `started_ns` on is touched), then Follow.
  void Run(int64_t started_ns);
  void Follow();
  /// Reads root `root`'s queued events into what is kept (with mutex_ held).
  void Drain(size_t root);
  void DrainAll();
  void Touch(size_t root, const std::string& path, uint32_t mask);
  /// The next take cannot be whole: what it held goes (with mutex_ held).
  void NotWhole();
  /// Looks at each touched path and hands the announcement to the sink; nothing when nothing
  /// was touched.
  void Say();
  /// Has the thread drain everything queued (and say it, with `say`), and waits for it.
  void Sync(bool say);
  void SayLost();

  std::vector<FeedRoot> roots_;
  const size_t roots_count_;
  UserCredentials owner_;
  std::vector<std::unique_ptr<UpperWatch>> watches_;
  SeenSink sink_;
  std::chrono::milliseconds period_;
  UniqueFd stop_;  ///< an eventfd: written once, to end the thread
  UniqueFd wake_;  ///< an eventfd: a Sync is asked for

  mutable std::mutex mutex_;
  std::condition_variable synced_;
  unsigned listening_ = 0;  ///< jobs that listen (JobStarted)
  uint64_t asked_ = 0, served_ = 0;  ///< Syncs asked for and served
  bool say_asked_ = false;
  bool walked_ = false, failed_ = false, stopped_ = false;
  std::set<std::pair<size_t, std::string>> said_next_;  ///< touched since the last announcement, in path order
  bool feed_lost_ = false;
  TouchedPaths touched_;  ///< since the last take
  size_t touched_count_ = 0;  ///< paths held in touched_, every root
  size_t touched_bytes_ = 0;  ///< and their bytes
  uint64_t takes_ = 0;

  std::optional<KnownChanges> known_;
  std::thread thread_;
};

/// One job listening to its sandbox's feed (JobStarted), until End (JobEnded) or its end.
class FeedListener {
 public:
  explicit FeedListener(std::shared_ptr<ChangeFeed> feed) : feed_(std::move(feed)) {
    if (feed_) feed_->JobStarted();
  }
  ~FeedListener() { End(); }
  FeedListener(const FeedListener&) = delete;
  FeedListener& operator=(const FeedListener&) = delete;
  /// Everything the job changed is said before this returns.
  void End() {
    if (auto feed = std::exchange(feed_, nullptr)) feed->JobEnded();
  }

 private:
  std::shared_ptr<ChangeFeed> feed_;
};

/// The feed of every sandbox whose jobs asked for one, by sandbox id, kept between its jobs.
class ChangeFeeds {
 public:
  ChangeFeeds();
  /// The feed of `sandbox`: the one it has, or a new one announcing to `sink`. A new one
  /// first lets go of its owner's idle feeds (no job listening) when the owner's
  /// share of inotify instances has no room for it. Throws Error when no feed can be had.
  std::shared_ptr<ChangeFeed> Follow(Sandbox& sandbox, const SeenSink& sink);
  /// The feed `sandbox_id` has, if any.
  std::shared_ptr<ChangeFeed> Find(const std::string& sandbox_id);

  static constexpr std::chrono::milliseconds kPeriod{250};

 private:
  struct Held {
    std::shared_ptr<ChangeFeed> feed;
    uid_t owner = 0;
    uint64_t last_used = 0;
  };
  struct State {
    std::mutex mutex;
    std::map<std::string, Held> feeds;
    uint64_t uses = 0;
  };
  /// Lets go of the feed of `sandbox_id` (the layers are about to change under it, or go).
  static void Forget(State& state, const std::string& sandbox_id);
  /// Shared with the hooks the sandboxes hold (a sandbox may outlive the launcher).
  std::shared_ptr<State> state_;
};

}  // namespace sandboxd
