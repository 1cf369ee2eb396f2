#pragma once
/// Jobs end with the client that started them: when a caller's connection to the bus goes
/// (sandboxctl killed, an app quit), every job it started and that is still running is killed
/// (reason "disconnected"). The bus daemon announces each lost unique name with
/// NameOwnerChanged; unique names are never reused, so a name once gone stays gone.

#include <sdbus-c++/IConnection.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "jobs/job.h"

namespace sandboxd {

class CallerWatch {
 public:
  /// Subscribes to lost names on `connection` (call once, before the event loop runs).
  void Start(sdbus::IConnection& connection);
  /// Kills `job` when `sender` leaves the bus (at once if it already has).
  void Track(const std::string& sender, const std::shared_ptr<Job>& job);
  /// The bus says `name` is gone.
  void NameLost(const std::string& name);

 private:
  /// Names seen going, newest last, so that a job registered just after its caller left (the
  /// signal raced the Run call) is still caught; bounded, oldest forgotten first.
  static constexpr size_t kGoneRemembered = 4096;

  std::mutex mutex_;
  std::map<std::string, std::vector<std::weak_ptr<Job>>> jobs_;
  std::deque<std::string> gone_order_;
  std::set<std::string> gone_;
  sdbus::Slot match_;
};

}  // namespace sandboxd
