#include "bus/caller_watch.h"

#include <sdbus-c++/Message.h>

namespace sandboxd {

void CallerWatch::Start(sdbus::IConnection& connection) {
  // arg2 (the new owner) empty: a name lost. Only unique names (":1.42") can start jobs.
  match_ = connection.addMatch(
      "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''",
      [this](sdbus::Message& message) {
        std::string name, old_owner, new_owner;
        message >> name >> old_owner >> new_owner;
        if (!name.empty() && name[0] == ':' && new_owner.empty()) NameLost(name);
      });
}

void CallerWatch::Track(const std::string& sender, const std::shared_ptr<Job>& job) {
  {
    std::lock_guard lock(mutex_);
    if (!gone_.count(sender)) {
      auto& jobs = jobs_[sender];
      // Forget the finished ones while here, so a long-lived client's list stays short.
      std::erase_if(jobs, [](const std::weak_ptr<Job>& weak) {
        auto job = weak.lock();
        return !job || job->state() == JobState::kFinished;
      });
      jobs.push_back(job);
      return;
    }
  }
  job->Cancel(JobEndReason::kDisconnected);
}

void CallerWatch::NameLost(const std::string& name) {
  std::vector<std::weak_ptr<Job>> jobs;
  {
    std::lock_guard lock(mutex_);
    if (gone_.insert(name).second) {
      gone_order_.push_back(name);
      if (gone_order_.size() > kGoneRemembered) {
        gone_.erase(gone_order_.front());
        gone_order_.pop_front();
      }
    }
    auto it = jobs_.find(name);
    if (it == jobs_.end()) return;
    jobs = std::move(it->second);
    jobs_.erase(it);
  }
  for (auto& weak : jobs)
    if (auto job = weak.lock()) job->Cancel(JobEndReason::kDisconnected);
}

}  // namespace sandboxd
