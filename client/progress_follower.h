#pragma once
/// Shows a long operation's progress on sandboxctl's terminal while the verb waits for its
/// answer: a second connection to the bus, of the same user, hears the sandbox's Progress
/// signals (sent to every connection of the owner) on a thread of its own and redraws one line
/// on stderr. Nothing before the operation has run for a second, nothing when stderr is not a
/// terminal (or with --json); the line is wiped when the operation ends.

#include <sdbus-c++/sdbus-c++.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "context.h"
#include "progress_line.h"

namespace sandboxctl {

class ProgressFollower {
 public:
  /// Follows `operation` (commit, undo, suspend, resume) of the sandbox at `sandbox_path`.
  ProgressFollower(const Context& ctx, const std::string& sandbox_path, std::string operation);
  ~ProgressFollower();
  ProgressFollower(const ProgressFollower&) = delete;
  ProgressFollower& operator=(const ProgressFollower&) = delete;

 private:
  void Heard(const ProgressReport& report);
  void Wipe();

  std::string operation_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::unique_ptr<sdbus::IConnection> bus_;
  std::unique_ptr<sdbus::IProxy> proxy_;
  std::mutex mutex_;
  bool drawn_ = false;
};

}  // namespace sandboxctl
