#include "jobs/change_feed.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "base/beneath.h"
#include "base/errors.h"
#include "runtime/file_clock.h"
#include "jobs/inotify_shares.h"
#include "model/change.h"
#include "sandbox/changeset_scanner.h"
#include "sandbox/sandbox.h"

namespace sandboxd {
namespace {

void Signal(int eventfd, const char* what) {
  uint64_t one = 1;
  if (write(eventfd, &one, sizeof one) != sizeof one) spdlog::warn("cannot {}: {}", what, std::strerror(errno));
}

}  // namespace

ChangeFeed::ChangeFeed(std::vector<FeedRoot> roots, const UserCredentials& owner_identity, SeenSink sink,
                       std::chrono::milliseconds period)
    : roots_(std::move(roots)),
      roots_count_(roots_.size()),
      owner_(owner_identity),
      sink_(std::move(sink)),
      period_(period),
      stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!stop_ || !wake_) ThrowErrno("cannot make the change feed's signals");
  touched_.paths.resize(roots_.size());
  // Read from the clock file times are stamped with, before the job that asked for the feed
  // can write: a directory changed from now on has an mtime at or after it.
  const int64_t started_ns = FileClockNowNs();
  thread_ = std::thread([this, started_ns] { Run(started_ns); });
}

ChangeFeed::~ChangeFeed() {
  Signal(stop_.get(), "stop the change feed");
  if (thread_.joinable()) thread_.join();
}

void ChangeFeed::Run(int64_t started_ns) {
  // The layers are walked (a watch per directory) on the feed's thread: a large upper must not
  // hold up the job's start. What the job changes meanwhile in a directory not yet watched
  // shows in that directory's mtime (UpperWatch).
  try {
    for (size_t i = 0; i < roots_.size(); ++i) {
      const int merged = roots_[i].merged ? roots_[i].merged.get() : -1;
      auto watch = std::make_unique<UpperWatch>(
          roots_[i].upper.get(), owner_.uid, started_ns,
          [&](const std::string& path) {
            std::lock_guard lock(mutex_);
            Touch(i, path, 0);
          },
          merged);
      std::lock_guard lock(mutex_);
      watches_.push_back(std::move(watch));
    }
  } catch (const std::exception& e) {
    // Past the inotify cap (or without inotify) the app is told that it hears nothing of its
    // jobs' changes, rather than left to take silence for a job that changes nothing.
    spdlog::warn("the change feed cannot follow the sandbox: {}", e.what());
    bool listened;
    {
      std::lock_guard lock(mutex_);
      failed_ = true;
      watches_.clear();
      listened = listening_ > 0;  // else the first job to listen says it (JobStarted)
    }
    if (listened) SayLost();
    std::lock_guard lock(mutex_);
    stopped_ = true;
    served_ = asked_;
    synced_.notify_all();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    walked_ = true;
  }
  Follow();
  std::lock_guard lock(mutex_);
  stopped_ = true;
  served_ = asked_;
  synced_.notify_all();
}

void ChangeFeed::SayLost() {
  SeenChanges said;
  said.lost = true;
  try {
    sink_(said);
  } catch (const std::exception& announce) {
    spdlog::warn("the change feed could not announce: {}", announce.what());
  }
}

void ChangeFeed::Touch(size_t root, const std::string& path, uint32_t mask) {
  if (listening_ > 0 && path != ".") said_next_.emplace(root, path);
  if (mask & (IN_DELETE | IN_MOVED_FROM)) touched_.removed = true;
  // A directory moved away takes its entries' paths with it untold.
  if ((mask & IN_ISDIR) && (mask & IN_MOVED_FROM)) NotWhole();
  if (!touched_.whole) return;  // the next settling scans it all: nothing to hold
  if (!touched_.paths[root].insert(path).second) return;
  ++touched_count_;
  touched_bytes_ += path.size();
  if (touched_count_ > kMaxTouched || touched_bytes_ > kMaxTouchedBytes) NotWhole();
}

void ChangeFeed::NotWhole() {
  touched_.whole = false;
  for (auto& each : touched_.paths) std::set<std::string>().swap(each);
  touched_count_ = touched_bytes_ = 0;
}

void ChangeFeed::Drain(size_t root) {
  watches_[root]->Drain([&](const std::string& path, uint32_t mask) { Touch(root, path, mask); });
  if (watches_[root]->TakeLost()) {
    if (listening_ > 0) feed_lost_ = true;
    NotWhole();
  }
}

void ChangeFeed::DrainAll() {
  for (size_t i = 0; i < watches_.size(); ++i) Drain(i);
}

void ChangeFeed::Follow() {
  using Clock = std::chrono::steady_clock;
  std::vector<pollfd> fds;
  for (const auto& watch : watches_) fds.push_back({watch->fd(), POLLIN, 0});
  const size_t wake = fds.size();
  fds.push_back({wake_.get(), POLLIN, 0});
  fds.push_back({stop_.get(), POLLIN, 0});
  auto next = Clock::now() + period_;
  for (;;) {
    bool listened;
    {
      std::lock_guard lock(mutex_);
      listened = listening_ > 0;
    }
    // Silent between jobs: events are taken in as they come, nothing is said.
    int timeout = -1;
    if (listened) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      timeout = left > 0 ? static_cast<int>(left) : 0;
    }
    int ready = poll(fds.data(), fds.size(), timeout);
    if (ready < 0 && errno != EINTR) {
      spdlog::warn("the change feed stopped: {}", std::strerror(errno));
      std::lock_guard lock(mutex_);
      failed_ = true;
      return;
    }
    {
      std::lock_guard lock(mutex_);
      for (size_t i = 0; i < watches_.size(); ++i)
        if (fds[i].revents & POLLIN) Drain(i);
    }
    if (fds.back().revents & POLLIN) {
      std::lock_guard lock(mutex_);
      DrainAll();
      if (listening_ > 0) Say();
      return;
    }
    if (fds[wake].revents & POLLIN) {
      uint64_t count;
      (void)!read(wake_.get(), &count, sizeof count);
      std::lock_guard lock(mutex_);
      uint64_t asked = asked_;
      DrainAll();
      if (std::exchange(say_asked_, false)) Say();
      served_ = asked;
      synced_.notify_all();
    }
    std::lock_guard lock(mutex_);
    if (listening_ == 0) {
      said_next_.clear();
      feed_lost_ = false;
    } else if (Clock::now() >= next) {
      Say();
      next = Clock::now() + period_;
    }
  }
}

void ChangeFeed::Say() {
  if (said_next_.empty() && !feed_lost_) return;
  SeenChanges said;
  said.lost = std::exchange(feed_lost_, false);
  for (const auto& [root, path] : said_next_) {
    if (said.listed.size() == kMaxListed) {
      ++said.more;
      continue;
    }
    const FeedRoot& sides = roots_[root];
    try {
      if (auto change = ScanOnePath(sides.live.get(), sides.upper.get(), owner_, path, kCompareLimit)) {
        said.listed.push_back({root, path, std::string(ToString(change->kind))});
        continue;
      }
      // A directory that holds no change of its own (its entries say what changed in it) is
      // not worth a line; anything else the job touched is back as the live tree has it.
      auto upper = StatBeneath(sides.upper.get(), path);
      if (upper && S_ISDIR(upper->st_mode)) continue;
      said.listed.push_back({root, path, "unchanged"});
    } catch (const std::exception& e) {
      spdlog::debug("the change feed passes over {}: {}", path, e.what());
    }
  }
  said_next_.clear();
  if (said.listed.empty() && !said.more && !said.lost) return;
  try {
    sink_(said);
  } catch (const std::exception& e) {
    spdlog::warn("the change feed could not announce: {}", e.what());
  }
}

void ChangeFeed::Sync(bool say) {
  std::unique_lock lock(mutex_);
  if (stopped_) return;
  uint64_t ticket = ++asked_;
  if (say) say_asked_ = true;
  Signal(wake_.get(), "wake the change feed");
  synced_.wait(lock, [&] { return served_ >= ticket || stopped_; });
}

void ChangeFeed::JobStarted() {
  bool lost;
  {
    std::lock_guard lock(mutex_);
    ++listening_;
    lost = failed_;
  }
  if (lost) {
    SayLost();
    return;
  }
  Signal(wake_.get(), "wake the change feed");  // its poll counts periods from now on
}

void ChangeFeed::JobEnded() {
  Sync(/*say=*/true);
  std::lock_guard lock(mutex_);
  if (listening_ > 0) --listening_;
}

TouchedPaths ChangeFeed::TakeTouched() {
  Sync(/*say=*/false);
  std::lock_guard lock(mutex_);
  TouchedPaths taken = std::move(touched_);
  // Without a merged view to watch, writes through a mapping would go unseen.
  const bool followed = walked_ && !failed_ && !stopped_ &&
                        std::all_of(roots_.begin(), roots_.end(), [](const FeedRoot& root) { return static_cast<bool>(root.merged); }) &&
                        std::none_of(watches_.begin(), watches_.end(), [](const auto& watch) { return watch->partial(); });
  // The first take covers the walk, during which a directory not yet watched told nothing.
  taken.whole = taken.whole && followed && takes_ > 0;
  taken.followed = followed;
  ++takes_;
  touched_ = TouchedPaths{};
  touched_.paths.resize(roots_count_);
  touched_.whole = true;
  touched_count_ = touched_bytes_ = 0;
  return taken;
}

bool ChangeFeed::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

bool ChangeFeed::idle() const {
  std::lock_guard lock(mutex_);
  return listening_ == 0;
}

ChangeFeeds::ChangeFeeds() : state_(std::make_shared<State>()) {}

std::shared_ptr<ChangeFeed> ChangeFeeds::Follow(Sandbox& sandbox, const SeenSink& sink) {
  std::unique_lock lock(state_->mutex);
  auto found = state_->feeds.find(sandbox.id());
  if (found != state_->feeds.end() && !found->second.feed->failed()) {
    found->second.last_used = ++state_->uses;
    return found->second.feed;
  }
  std::vector<std::shared_ptr<ChangeFeed>> let_go;
  if (found != state_->feeds.end()) {
    let_go.push_back(std::move(found->second.feed));
    state_->feeds.erase(found);
  }
  // Room for one instance per root: idle feeds go, least recently used first, the owner's
  // before anyone else's (kept between jobs, they must not take the feed from a user whose jobs
  // run now: issue 40).
  const uid_t owner = sandbox.owner();
  InotifyShares& shares = InotifyShares::Daemon();
  while (shares.FreeInstances(owner) < sandbox.roots().size()) {
    // Past the owner's own share only their feeds make room; past the daemon's, anyone's do.
    const bool own_only = shares.UserFreeInstances(owner) < sandbox.roots().size();
    auto oldest = state_->feeds.end();
    auto before = [&](const Held& held) {
      if (own_only && held.owner != owner) return false;
      if (oldest == state_->feeds.end()) return true;
      const Held& other = oldest->second;
      if ((held.owner == owner) != (other.owner == owner)) return held.owner == owner;
      return held.last_used < other.last_used;
    };
    for (auto it = state_->feeds.begin(); it != state_->feeds.end(); ++it)
      if (it->second.feed->idle() && before(it->second)) oldest = it;
    if (oldest == state_->feeds.end()) break;
    // Its instances are given back as it goes: not under the lock (it joins its thread).
    auto feed = std::move(oldest->second.feed);
    state_->feeds.erase(oldest);
    lock.unlock();
    feed.reset();
    lock.lock();
  }
  std::vector<FeedRoot> roots;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) roots.push_back({sandbox.OpenLiveRoot(i), sandbox.OpenUpper(i), sandbox.OpenMergedView(i)});
  auto feed = std::make_shared<ChangeFeed>(std::move(roots), sandbox.LiveIdentity(), sink, kPeriod);
  state_->feeds[sandbox.id()] = Held{feed, owner, ++state_->uses};
  lock.unlock();
  // An exclusive operation is about to change (or remove) the layers it follows: it goes
  // first, with its watches and its count of the change set.
  std::weak_ptr<State> weak = state_;
  sandbox.gate().SetBeforeExclusive([weak, id = sandbox.id()] {
    if (auto state = weak.lock()) Forget(*state, id);
  });
  return feed;
}

void ChangeFeeds::Forget(State& state, const std::string& sandbox_id) {
  std::shared_ptr<ChangeFeed> gone;  // goes after the lock is let go: it joins its thread
  std::lock_guard lock(state.mutex);
  auto it = state.feeds.find(sandbox_id);
  if (it == state.feeds.end()) return;
  gone = std::move(it->second.feed);
  state.feeds.erase(it);
}

std::shared_ptr<ChangeFeed> ChangeFeeds::Find(const std::string& sandbox_id) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->feeds.find(sandbox_id);
  return it == state_->feeds.end() ? nullptr : it->second.feed;
}


}  // namespace sandboxd
