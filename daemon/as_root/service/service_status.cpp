#include "service/service_status.h"

namespace sandboxd {

std::string StatusLine(size_t sandboxes, unsigned running_jobs) {
  std::string line = std::to_string(sandboxes) + (sandboxes == 1 ? " sandbox, " : " sandboxes, ");
  if (running_jobs == 0) return line + "no job running";
  return line + std::to_string(running_jobs) + (running_jobs == 1 ? " job running" : " jobs running");
}

bool IdleLongEnough(const Activity& activity, int64_t now_usec, unsigned idle_seconds) {
  if (idle_seconds == 0 || activity.running_jobs > 0 || activity.operations > 0) return false;
  return now_usec - activity.last_call_usec >= static_cast<int64_t>(idle_seconds) * 1000000;
}

}  // namespace sandboxd
