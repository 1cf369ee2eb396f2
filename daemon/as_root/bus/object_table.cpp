#include "bus/object_table.h"

#include <utility>
#include <vector>

#include "bus/job_dbus.h"
#include "bus/sandbox_dbus.h"
#include "jobs/job.h"
#include "sandbox/sandbox.h"

namespace sandboxd {

ObjectTable::ObjectTable(sdbus::IConnection& connection) : connection_(connection) {}

ObjectTable::~ObjectTable() { Clear(); }

void ObjectTable::SetFaceParts(SandboxFaceParts sandboxes, JobFaceParts jobs) {
  sandbox_parts_.emplace(std::move(sandboxes));
  job_parts_.emplace(std::move(jobs));
}

void ObjectTable::Clear() {
  std::map<std::string, std::shared_ptr<SandboxDBus>> sandboxes;
  std::map<std::string, std::shared_ptr<JobDBus>> jobs;
  {
    std::lock_guard lock(mutex_);
    sandboxes.swap(sandboxes_);
    jobs.swap(jobs_);
    jobs_by_sandbox_.clear();
  }
  // Jobs' objects before their sandboxes', outside the lock, as the daemon dropped them before.
  jobs.clear();
}

std::shared_ptr<SandboxDBus> ObjectTable::PublishSandbox(std::shared_ptr<Sandbox> sandbox) {
  auto object = std::make_shared<SandboxDBus>(*sandbox_parts_, connection_, sandbox);
  std::lock_guard lock(mutex_);
  sandboxes_[sandbox->id()] = object;
  return object;
}

std::shared_ptr<SandboxDBus> ObjectTable::FindSandbox(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = sandboxes_.find(id);
  return it == sandboxes_.end() ? nullptr : it->second;
}

void ObjectTable::UnpublishSandbox(const std::string& id) {
  std::vector<std::shared_ptr<JobDBus>> jobs;
  std::shared_ptr<SandboxDBus> object;
  {
    std::lock_guard lock(mutex_);
    for (const auto& job_id : jobs_by_sandbox_[id]) {
      auto it = jobs_.find(job_id);
      if (it != jobs_.end()) {
        jobs.push_back(it->second);
        jobs_.erase(it);
      }
    }
    jobs_by_sandbox_.erase(id);
    auto it = sandboxes_.find(id);
    if (it != sandboxes_.end()) {
      object = it->second;
      sandboxes_.erase(it);
    }
  }
  for (auto& job : jobs) job->job()->Cancel();
  // Objects die here, outside the lock and outside any of their own handlers.
}

std::shared_ptr<JobDBus> ObjectTable::PublishJob(std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox) {
  auto object = std::make_shared<JobDBus>(*job_parts_, connection_, job, sandbox);
  std::lock_guard lock(mutex_);
  jobs_[job->id()] = object;
  jobs_by_sandbox_[sandbox->id()].push_back(job->id());
  return object;
}

std::vector<std::shared_ptr<Job>> ObjectTable::JobsOf(const std::string& sandbox_id) {
  std::vector<std::shared_ptr<Job>> jobs;
  std::lock_guard lock(mutex_);
  auto ids = jobs_by_sandbox_.find(sandbox_id);
  if (ids == jobs_by_sandbox_.end()) return jobs;
  for (const auto& id : ids->second)
    if (auto it = jobs_.find(id); it != jobs_.end()) jobs.push_back(it->second->job());
  return jobs;
}

void ObjectTable::UnpublishJob(const std::string& sandbox_id, const std::string& job_id) {
  std::shared_ptr<JobDBus> dropped;  // its object goes from the bus outside the lock
  std::lock_guard lock(mutex_);
  if (auto it = jobs_.find(job_id); it != jobs_.end()) {
    dropped = std::move(it->second);
    jobs_.erase(it);
  }
  if (auto ids = jobs_by_sandbox_.find(sandbox_id); ids != jobs_by_sandbox_.end())
    std::erase(ids->second, job_id);
}

void ObjectTable::PruneJobs(const std::string& sandbox_id, const std::string& keep) {
  std::vector<std::shared_ptr<JobDBus>> dropped;
  {
    std::lock_guard lock(mutex_);
    auto& ids = jobs_by_sandbox_[sandbox_id];
    size_t finished = 0;
    for (const auto& id : ids) {
      auto it = jobs_.find(id);
      if (it != jobs_.end() && it->second->job()->state() == JobState::kFinished) ++finished;
    }
    for (auto it = ids.begin(); it != ids.end() && finished > kFinishedJobsKept;) {
      auto object = jobs_.find(*it);
      bool is_finished = object != jobs_.end() && object->second->job()->state() == JobState::kFinished;
      if (*it != keep && is_finished) {
        dropped.push_back(object->second);
        jobs_.erase(object);
        it = ids.erase(it);
        --finished;
      } else {
        ++it;
      }
    }
  }
}

}  // namespace sandboxd
