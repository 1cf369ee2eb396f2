#pragma once
/// The options of Sandbox.Run (its `options` a{sv}), checked strictly: an unknown key, a value of
/// the wrong type or out of range is refused with a message naming it, never ignored.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jobs/job_limits.h"

namespace sandboxd {

struct JobOptions {
  bool network = false;           ///< "network" (b): this job may use the network (polkit asks)
  uint64_t timeout_sec = 0;       ///< "timeout_sec" (t): killed after this long; 0 for never
  std::vector<std::string> hide;  ///< "hide" (as): absolute paths made empty and unreadable
  bool tty = false;               ///< "tty" (b): stdin is a terminal, to be the job's controlling one
  JobLimits limits;               ///< "memory_max" (t, bytes), "tasks_max" (t): job_limits.h
  bool cwd_fallback = false;      ///< "cwd_fallback" (b): a cwd outside the roots means the first root
};

inline constexpr uint64_t kMaxJobTimeoutSec = 366ull * 24 * 3600;
inline constexpr size_t kMaxHiddenPaths = 256;

/// Throws Error(kInvalidArgument) naming the option and the sandbox.
JobOptions ParseJobOptions(const std::map<std::string, sdbus::Variant>& options, const std::string& sandbox_id);

}  // namespace sandboxd
