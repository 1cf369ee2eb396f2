#pragma once
/// A job's captured output (the stdout and stderr of a caller that passed no fds of its own),
/// kept in a file of the daemon's rather than in its memory: every user can start jobs that
/// print, and the daemon's heap is shared by all of them. The file lives in the state
/// directory's output/ (root's, 0700; the file 0600), holds at most Job::kOutputCap bytes, and
/// is removed with the job. What all of one user's kept jobs hold together is bounded by
/// [Limits] MaxCapturedOutputPerUser=: past it, more output is dropped and the job says its
/// output was truncated.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "unique_fd.h"

namespace sandboxd {

/// The bytes of captured output each user's kept jobs hold, against one per-user limit.
class OutputBudget {
 public:
  explicit OutputBudget(uint64_t per_user_max) : per_user_max_(per_user_max) {}
  /// Takes up to `wanted` bytes of `uid`'s share; returns how many it got.
  uint64_t Take(uid_t uid, uint64_t wanted);
  void Give(uid_t uid, uint64_t bytes);
  uint64_t Held(uid_t uid) const;
  uint64_t per_user_max() const { return per_user_max_; }

 private:
  const uint64_t per_user_max_;
  mutable std::mutex mutex_;
  std::map<uid_t, uint64_t> held_;
};

class CapturedOutput {
 public:
  /// Makes the empty file `dir`/`job_id` (which must not exist). Throws Error naming it.
  CapturedOutput(const std::string& dir, const std::string& job_id, uid_t owner, std::shared_ptr<OutputBudget> budget,
                 uint64_t job_max);
  /// Removes the file and gives its bytes back to the owner's share.
  ~CapturedOutput();
  CapturedOutput(const CapturedOutput&) = delete;
  CapturedOutput& operator=(const CapturedOutput&) = delete;

  /// Appends what the job's and the owner's limits leave room for; true when something was
  /// kept. What does not fit (or cannot be written: a full disk) is dropped and marks the
  /// output truncated.
  bool Append(const char* data, size_t size);
  /// Once the job has ended: no more is written, and the file is no longer held open (a user's
  /// many kept jobs must not hold as many of the daemon's fds).
  void Close();
  uint64_t size() const;
  bool truncated() const;
  /// At most `max_bytes` from `offset` (nothing past the end).
  std::string Read(uint64_t offset, uint32_t max_bytes) const;

 private:
  const std::string path_;
  const uid_t owner_;
  const std::shared_ptr<OutputBudget> budget_;
  const uint64_t job_max_;
  mutable std::mutex mutex_;
  UniqueFd fd_;
  uint64_t size_ = 0;
  bool truncated_ = false;
};

/// Empties `dir` of what a previous daemon's jobs left (their jobs are gone with it), making
/// it (root's, 0700) if missing.
void PrepareOutputDir(const std::string& dir);

}  // namespace sandboxd
