#include "bus/bus_peers.h"

#include <exception>
#include <set>

#include "base/errors.h"

namespace sandboxd {

BusPeers::BusPeers(std::unique_ptr<BusDirectory> directory, pid_t own_pid) : directory_(std::move(directory)), own_pid_(own_pid) {}

void BusPeers::SetExcluded(Excluded excluded) {
  std::lock_guard lock(mutex_);
  excluded_ = std::move(excluded);
}

void BusPeers::ForbidThread(std::thread::id thread) {
  std::lock_guard lock(mutex_);
  forbidden_thread_ = thread;
}

size_t BusPeers::remembered() const {
  std::lock_guard lock(mutex_);
  return known_.size();
}

std::vector<std::string> BusPeers::ConnectionsOf(uid_t uid) {
  std::vector<std::pair<std::string, Known>> candidates;
  Excluded excluded;
  {
    std::lock_guard lock(mutex_);
    if (forbidden_thread_ != std::thread::id() && std::this_thread::get_id() == forbidden_thread_)
      throw Error(Code::kFailed, "the recipients of a signal were asked for on the bus loop thread, which must not wait for the bus daemon");
    excluded = excluded_;
    std::set<std::string> now;
    try {
      // Listed now, not remembered from earlier: a connection made a moment ago (a listener
      // that subscribed and never called us) is one of the owner's connections too.
      for (auto& name : directory_->Names())
        if (!name.empty() && name[0] == ':') now.insert(std::move(name));
      // Forget the names that left: they never come back, and the map stays as small as the bus.
      std::erase_if(known_, [&now](const auto& entry) { return !now.count(entry.first); });
      for (const auto& name : now) {
        auto it = known_.find(name);
        if (it == known_.end()) {
          std::optional<PeerIdentity> identity = directory_->Identity(name);
          if (!identity) continue;  // left between the two questions: no one to send to
          it = known_.emplace(name, Known{*identity, std::nullopt}).first;
        }
        // Our own connections are never recipients: they would only queue what they never read.
        const PeerIdentity& peer = it->second.identity;
        if (peer.uid == uid && !(own_pid_ > 0 && peer.pid == own_pid_)) candidates.emplace_back(name, it->second);
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Code::kFailed, std::string("cannot learn the connections of uid ") + std::to_string(uid) + " from the bus: " + e.what());
    }
  }
  std::vector<std::string> names;
  std::vector<std::pair<std::string, bool>> answered;
  for (const auto& [name, known] : candidates) {
    bool out = false;
    if (known.excluded) {
      out = *known.excluded;
    } else if (excluded) {
      out = excluded(name, known.identity);
      answered.emplace_back(name, out);
    }
    if (!out) names.push_back(name);
  }
  if (!answered.empty()) {
    std::lock_guard lock(mutex_);
    for (const auto& [name, out] : answered)
      if (auto it = known_.find(name); it != known_.end()) it->second.excluded = out;
  }
  return names;
}

}  // namespace sandboxd
