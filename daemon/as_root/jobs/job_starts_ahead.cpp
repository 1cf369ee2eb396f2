#include "jobs/job_starts_ahead.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>

#include "base/fs_util.h"

namespace sandboxd {
namespace {

/// After a start could not be made ahead (the log says why), the next try waits this long:
/// jobs start the slow way meanwhile, and a lasting fault is not retried in a loop.
constexpr std::chrono::seconds kRetryAfter{10};

}  // namespace

JobStartsAhead::JobStartsAhead(std::string starter, std::optional<std::string> cgroups, const LimitControllers& limits)
    : starter_(std::move(starter)), cgroups_(std::move(cgroups)), limits_(limits) {
  // Nothing to enter ahead: a job starts as fast without.
  if (!cgroups_ && !limits_.MakesV1Groups()) return;
  thread_ = std::thread([this] { Run(); });
}

JobStartsAhead::~JobStartsAhead() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // A start never taken: its parked child is killed and reaped (ParkedSpawn), then its cgroups,
  // empty by then, are removed.
  if (ready_) {
    ready_->starter = ParkedSpawn();
    ready_.reset();
  }
}

std::optional<PreparedJobStart> JobStartsAhead::Take() {
  std::optional<PreparedJobStart> taken;
  {
    std::lock_guard lock(mutex_);
    if (!ready_) return std::nullopt;
    taken = std::move(ready_);
    ready_.reset();
  }
  wake_.notify_all();
  // A parked child that died meanwhile (killed by someone with the right to) is no start.
  if (!taken->starter.valid()) return std::nullopt;
  return taken;
}

bool JobStartsAhead::WaitReady(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return wake_.wait_for(lock, timeout, [this] { return ready_.has_value(); });
}

PreparedJobStart JobStartsAhead::Prepare() {
  PreparedJobStart start;
  start.job_id = RandomId();
  const std::string name = "job-" + start.job_id;
  std::vector<int> procs;
  if (cgroups_) {
    start.cgroup = std::make_unique<JobCgroup>(*cgroups_, name);
    procs.push_back(start.cgroup->procs_fd());
  }
  start.limit_groups = limits_.MakeGroups(name);
  if (start.limit_groups)
    for (int fd : start.limit_groups->procs_fds()) procs.push_back(fd);
  // On this thread, which lives as long as the jobs started through it (see the header).
  start.starter = ParkedSpawn::Start(starter_, procs);
  return start;
}

void JobStartsAhead::Run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (ready_) {
      wake_.wait(lock, [this] { return stopping_ || !ready_; });
      continue;
    }
    lock.unlock();
    std::optional<PreparedJobStart> made;
    try {
      made = Prepare();
    } catch (const std::exception& e) {
      spdlog::warn("the next job's start cannot be made ahead ({}); jobs start without, and it is tried again in {} s", e.what(),
                   kRetryAfter.count());
    }
    lock.lock();
    if (made) {
      ready_ = std::move(made);
      lock.unlock();
      wake_.notify_all();
      lock.lock();
    } else {
      wake_.wait_for(lock, kRetryAfter, [this] { return stopping_; });
    }
  }
}

}  // namespace sandboxd
