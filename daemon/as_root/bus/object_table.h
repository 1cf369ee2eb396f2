#pragma once
/// The published D-Bus objects: one per sandbox and one per job kept (running, or finished and
/// among the last kFinishedJobsKept of its sandbox), found by id. Publishing registers the
/// object on the bus; an object dropped from the table dies outside the table's lock and outside
/// any of its own handlers.

#include <sdbus-c++/sdbus-c++.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bus/face_parts.h"

namespace sandboxd {

class Job;
class JobDBus;
class Sandbox;
class SandboxDBus;

class ObjectTable {
 public:
  /// Finished jobs kept per sandbox so that their status and output stay readable.
  static constexpr size_t kFinishedJobsKept = 16;

  explicit ObjectTable(sdbus::IConnection& connection);
  ~ObjectTable();

  /// What the objects are made with; once, before the first publication (the sandbox faces'
  /// parts name this table, so it exists first).
  void SetFaceParts(SandboxFaceParts sandboxes, JobFaceParts jobs);

  std::shared_ptr<SandboxDBus> PublishSandbox(std::shared_ptr<Sandbox> sandbox);
  std::shared_ptr<SandboxDBus> FindSandbox(const std::string& id);
  /// Drops the sandbox's object and its jobs' objects (cancelling running jobs).
  void UnpublishSandbox(const std::string& id);
  /// Publishes a job object of `sandbox`.
  std::shared_ptr<JobDBus> PublishJob(std::shared_ptr<Job> job, std::shared_ptr<Sandbox> sandbox);
  /// The sandbox's jobs that have objects (running, and the finished ones kept), oldest first.
  std::vector<std::shared_ptr<Job>> JobsOf(const std::string& sandbox_id);
  /// Drops the object of a job that was published but did not start after all.
  void UnpublishJob(const std::string& sandbox_id, const std::string& job_id);
  /// Forgets the oldest finished jobs of a sandbox beyond kFinishedJobsKept, never `keep`.
  void PruneJobs(const std::string& sandbox_id, const std::string& keep);
  /// Drops every object (the daemon's end).
  void Clear();

 private:
  sdbus::IConnection& connection_;
  std::optional<SandboxFaceParts> sandbox_parts_;
  std::optional<JobFaceParts> job_parts_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<SandboxDBus>> sandboxes_;
  std::map<std::string, std::shared_ptr<JobDBus>> jobs_;
  std::map<std::string, std::deque<std::string>> jobs_by_sandbox_;
};

}  // namespace sandboxd
