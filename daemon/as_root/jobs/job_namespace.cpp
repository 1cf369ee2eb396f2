#include "jobs/job_namespace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace sandboxd {
namespace {

std::optional<NamespaceId> NamespaceOf(const std::string& ns_path) {
  UniqueFd fd(open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!fd || fstat(fd.get(), &st) != 0) return std::nullopt;
  return NamespaceId{st.st_dev, st.st_ino};
}

/// PPid and the NSpid list (the pid in each nested pid namespace, outermost first) of `pid`.
bool ReadStatus(pid_t pid, pid_t& parent, std::vector<long>& ns_pids) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  if (!status) return false;
  bool have_parent = false;
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "PPid:") {
      have_parent = static_cast<bool>(fields >> parent);
    } else if (key == "NSpid:") {
      for (long value; fields >> value;) ns_pids.push_back(value);
    }
  }
  return have_parent && !ns_pids.empty();
}

}  // namespace

std::optional<NamespaceId> OwnPidNamespace() { return NamespaceOf("/proc/self/ns/pid"); }

std::optional<pid_t> ReportedChildPid(const std::string& line) {
  auto parsed = nlohmann::json::parse(line, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("child-pid") || !parsed["child-pid"].is_number_integer()) return std::nullopt;
  auto pid = parsed["child-pid"].get<int64_t>();
  if (pid <= 1 || pid > 4194304) return std::nullopt;  // above PID_MAX_LIMIT: no process
  return static_cast<pid_t>(pid);
}

std::optional<NamespaceInit> VerifyNamespaceInit(pid_t reported, pid_t bwrap_pid) {
  // The pidfd first: from here on `reported` cannot become another process unnoticed.
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, reported, 0)));
  if (!pidfd) return std::nullopt;
  pid_t parent = -1;
  std::vector<long> ns_pids;
  if (!ReadStatus(reported, parent, ns_pids)) return std::nullopt;
  // A child of our bwrap, and pid 1 of a namespace nested in ours.
  if (parent != bwrap_pid || ns_pids.size() < 2 || ns_pids.back() != 1) return std::nullopt;
  auto own = OwnPidNamespace();
  auto theirs = NamespaceOf("/proc/" + std::to_string(reported) + "/ns/pid");
  if (!own || !theirs || *own == *theirs) return std::nullopt;
  // Still alive: what was read under /proc/<reported> was the pidfd's process.
  if (syscall(SYS_pidfd_send_signal, pidfd.get(), 0, nullptr, 0) != 0) return std::nullopt;
  return NamespaceInit{std::move(pidfd), *theirs};
}

}  // namespace sandboxd
