#pragma once
/// One command running in a sandbox: its bwrap child, the monitor thread that collects its
/// status and captured output, and its end state. The process tree dies with the Job (pid
/// namespace + SIGKILL of bwrap), so nothing of a job outlives the daemon's knowledge of it.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "credentials.h"
#include "fd.h"
#include "process.h"

namespace sandboxd {

enum class JobState { kRunning, kFinished };
std::string_view ToString(JobState state);

struct JobEnd {
  int exit_status = 0;       ///< the command's status, 128+N for signal N
  std::string reason;        ///< exited, failed, cancelled
};

struct JobLaunch {
  std::vector<std::string> bwrap_args;  ///< full argv, bwrap first
  std::vector<std::string> env;
  std::string cwd = "/";
  UserCredentials user;
  UniqueFd stdin_fd;    ///< invalid → /dev/null
  UniqueFd stdout_fd;   ///< invalid → captured
  UniqueFd stderr_fd;   ///< invalid → captured
};

class Job {
 public:
  /// Output kept in memory for fd-less callers; more is dropped and OutputTruncated set.
  static constexpr uint64_t kOutputCap = 8 << 20;
  using FinishedCallback = std::function<void(const JobEnd&)>;

  Job(std::string id, std::string sandbox_id, std::vector<std::string> argv);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  /// Starts bwrap; `on_finished` runs once on the monitor thread when the job has ended.
  void Start(JobLaunch launch, FinishedCallback on_finished);
  /// Kills the whole job (bwrap and its pid namespace). Harmless when finished.
  void Cancel();
  /// Calls `callback` once the job has ended (at once if it has).
  void WhenFinished(FinishedCallback callback);

  const std::string& id() const { return id_; }
  const std::string& sandbox_id() const { return sandbox_id_; }
  const std::vector<std::string>& argv() const { return argv_; }
  JobState state() const;
  JobEnd end() const;
  bool output_truncated() const;
  std::string ReadOutput(uint64_t offset, uint32_t max_bytes) const;

 private:
  void Monitor(UniqueFd status_fd, UniqueFd capture_fd);

  const std::string id_;
  const std::string sandbox_id_;
  const std::vector<std::string> argv_;
  mutable std::mutex mutex_;
  ChildProcess child_;
  JobState state_ = JobState::kRunning;
  JobEnd end_;
  bool cancelled_ = false;
  std::string output_;
  bool truncated_ = false;
  std::vector<FinishedCallback> waiters_;
  std::thread monitor_;
};

}  // namespace sandboxd
