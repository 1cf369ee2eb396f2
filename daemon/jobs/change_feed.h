#pragma once
/// The live change feed: while a sandbox's jobs run, what they change is said as it happens,
/// at most once a period (250 ms), each path once however often it was touched meanwhile, with
/// the kind of change it holds at that moment. A desktop app shows "the agent is editing
/// src/app.c" from it; the change set itself (GetChanges, after ChangeSetChanged) stays the
/// account to act on.
///
/// One feed per sandbox, shared by its running jobs (ChangeFeeds): started by the first, ended
/// by the last, which has the feed say what is left before the job's end is announced. The
/// feed watches the upper layers (upper_watch.h) and looks at each touched path beneath both
/// roots as the change-set scan would (ScanOnePath), on a thread of its own: the job never
/// waits for it.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/credentials.h"
#include "base/fd.h"
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

/// The two sides of one root: the live directory and the sandbox's upper layer.
struct FeedRoot {
  UniqueFd live;
  UniqueFd upper;
};

class ChangeFeed {
 public:
  static constexpr size_t kMaxListed = 1000;
  /// Same-size files larger than this are called modified without reading both (a job
  /// rewriting a large file would otherwise have it read every period).
  static constexpr uint64_t kCompareLimit = 256 * 1024;

  /// Starts following `roots` (on the feed's own thread, which `sink` is called on); a feed
  /// that cannot follow them (no inotify) logs why and says nothing. The live side of each
  /// touched path is looked at with `owner`'s eyes, as the change set's scan does.
  ChangeFeed(std::vector<FeedRoot> roots, const UserCredentials& owner, SeenSink sink, std::chrono::milliseconds period);
  /// Says what is left (everything queued by now: a job that has ended made its last change
  /// before this), then ends the thread.
  ~ChangeFeed();
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

 private:
  void Follow();
  void Drain(size_t root);
  /// Looks at each touched path and hands the announcement to the sink; nothing when nothing
  /// was touched.
  void Say();

  std::vector<FeedRoot> roots_;
  UserCredentials owner_;
  std::vector<std::unique_ptr<UpperWatch>> watches_;
  SeenSink sink_;
  std::chrono::milliseconds period_;
  UniqueFd stop_;  ///< an eventfd: written once, to end the thread
  std::set<std::pair<size_t, std::string>> touched_;  ///< since the last announcement, in path order
  bool lost_ = false;
  std::thread thread_;
};

/// The feeds of every sandbox with running jobs, by sandbox id.
class ChangeFeeds {
 public:
  /// The feed of `sandbox` for one more job: the one its running jobs share, or a new one
  /// announcing to `sink`. The job holds it until it ends. Throws Error when no feed can be had.
  std::shared_ptr<ChangeFeed> Join(const Sandbox& sandbox, const SeenSink& sink);

  static constexpr std::chrono::milliseconds kPeriod{250};

 private:
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<ChangeFeed>> feeds_;
};

}  // namespace sandboxd
