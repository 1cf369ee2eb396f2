#include "jobs/change_feed.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <utility>

#include <spdlog/spdlog.h>

#include "base/beneath.h"
#include "base/errors.h"
#include "base/file_clock.h"
#include "model/change.h"
#include "sandbox/changeset_scanner.h"
#include "sandbox/sandbox.h"

namespace sandboxd {

ChangeFeed::ChangeFeed(std::vector<FeedRoot> roots, const UserCredentials& owner_identity, SeenSink sink,
                       std::chrono::milliseconds period)
    : roots_(std::move(roots)), owner_(owner_identity), sink_(std::move(sink)), period_(period), stop_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!stop_) ThrowErrno("cannot make the change feed's stop signal");
  // The layers are walked (a watch per directory) on the feed's thread: a large upper must not
  // hold up the job's start. What the job changes meanwhile in a directory not yet watched
  // shows in that directory's mtime (UpperWatch).
  // Read from the clock file times are stamped with: a directory changed from now on has an
  // mtime at or after it.
  const int64_t started_ns = FileClockNowNs();
  thread_ = std::thread([this, owner = owner_.uid, started_ns] {
    try {
      for (size_t i = 0; i < roots_.size(); ++i)
        watches_.push_back(std::make_unique<UpperWatch>(roots_[i].upper.get(), owner, started_ns, [&](const std::string& path) {
          touched_.emplace(i, path);
        }));
    } catch (const std::exception& e) {
      // Past the inotify cap (or without inotify) the app is told once that it hears nothing
      // of this job's changes, rather than left to take silence for a job that changes nothing.
      spdlog::warn("the change feed cannot follow the sandbox: {}", e.what());
      SeenChanges said;
      said.lost = true;
      try {
        sink_(said);
      } catch (const std::exception& announce) {
        spdlog::warn("the change feed could not announce: {}", announce.what());
      }
      return;
    }
    Follow();
  });
}

ChangeFeed::~ChangeFeed() {
  uint64_t one = 1;
  if (write(stop_.get(), &one, sizeof one) != sizeof one) spdlog::warn("cannot stop the change feed: {}", std::strerror(errno));
  if (thread_.joinable()) thread_.join();
}

void ChangeFeed::Drain(size_t root) {
  watches_[root]->Drain([&](const std::string& path) { touched_.emplace(root, path); });
  if (watches_[root]->TakeLost()) lost_ = true;
}

void ChangeFeed::Follow() {
  using Clock = std::chrono::steady_clock;
  std::vector<pollfd> fds;
  for (const auto& watch : watches_) fds.push_back({watch->fd(), POLLIN, 0});
  fds.push_back({stop_.get(), POLLIN, 0});
  auto next = Clock::now() + period_;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
    int ready = poll(fds.data(), fds.size(), left > 0 ? static_cast<int>(left) : 0);
    if (ready < 0 && errno != EINTR) {
      spdlog::warn("the change feed stopped: {}", std::strerror(errno));
      return;
    }
    for (size_t i = 0; i < watches_.size(); ++i)
      if (fds[i].revents & POLLIN) Drain(i);
    if (fds.back().revents & POLLIN) {
      // The last job has ended: everything it did is queued by now.
      for (size_t i = 0; i < watches_.size(); ++i) Drain(i);
      Say();
      return;
    }
    if (Clock::now() >= next) {
      Say();
      next = Clock::now() + period_;
    }
  }
}

void ChangeFeed::Say() {
  if (touched_.empty() && !lost_) return;
  SeenChanges said;
  said.lost = std::exchange(lost_, false);
  for (const auto& [root, path] : touched_) {
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
  touched_.clear();
  if (said.listed.empty() && !said.more && !said.lost) return;
  try {
    sink_(said);
  } catch (const std::exception& e) {
    spdlog::warn("the change feed could not announce: {}", e.what());
  }
}

std::shared_ptr<ChangeFeed> ChangeFeeds::Join(const Sandbox& sandbox, const SeenSink& sink) {
  std::lock_guard lock(mutex_);
  // Feeds whose jobs have all ended are forgotten as others are asked for.
  for (auto it = feeds_.begin(); it != feeds_.end();) it = it->second.expired() ? feeds_.erase(it) : std::next(it);
  if (auto running = feeds_[sandbox.id()].lock()) return running;
  std::vector<FeedRoot> roots;
  for (size_t i = 0; i < sandbox.roots().size(); ++i) roots.push_back({sandbox.OpenLiveRoot(i), sandbox.OpenUpper(i)});
  auto feed = std::make_shared<ChangeFeed>(std::move(roots), sandbox.LiveIdentity(), sink, kPeriod);
  feeds_[sandbox.id()] = feed;
  return feed;
}

}  // namespace sandboxd
