#include "jobs/job_senders.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "unique_fd.h"
#include "sandbox/root_validation.h"

namespace sandboxd {

JobSenders& JobSenders::Instance() {
  static JobSenders instance;
  return instance;
}

void JobSenders::SetJobCgroup(const std::string& path) {
  std::lock_guard lock(mutex_);
  job_cgroup_ = path;
}

void JobSenders::AddJobNamespace(const NamespaceId& id) {
  std::lock_guard lock(mutex_);
  namespaces_.insert(id);
}

void JobSenders::RemoveJobNamespace(const NamespaceId& id) {
  std::lock_guard lock(mutex_);
  auto it = namespaces_.find(id);
  if (it != namespaces_.end()) namespaces_.erase(it);
}

std::string PathFromCgroup2Root(const std::string& mount, const std::string& directory) {
  if (directory.size() <= mount.size()) return "/";
  return directory.substr(mount.size());
}

bool CgroupTextIsBelow(const std::string& text, const std::string& group) {
  if (group.empty()) return false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) return PathHolds(group, line.substr(3));
  return false;
}

bool JobSenders::InJobCgroup(pid_t pid) const {
  std::string group;
  {
    std::lock_guard lock(mutex_);
    group = job_cgroup_;
  }
  if (group.empty()) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::stringstream text;
  text << in.rdbuf();
  return CgroupTextIsBelow(text.str(), group);
}

bool JobSenders::InJobNamespace(pid_t pid) const {
  UniqueFd ns(open(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), O_RDONLY | O_CLOEXEC));
  // A job may nest pid namespaces of its own: walk up to ours, checking each.
  for (int depth = 0; ns && depth < 64; ++depth) {
    struct stat st;
    if (fstat(ns.get(), &st) != 0) return false;
    {
      std::lock_guard lock(mutex_);
      if (namespaces_.count(NamespaceId{st.st_dev, st.st_ino})) return true;
    }
    ns.reset(ioctl(ns.get(), NS_GET_PARENT));  // fails (EPERM) at the daemon's own namespace
  }
  return false;
}

JobSenders::Verdict JobSenders::Classify(pid_t pid) const {
  if (pid <= 0) return Verdict::kUnknown;
  // Opened first: while it shows the process alive, /proc/<pid> is that process.
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return Verdict::kUnknown;
  bool in_job = InJobCgroup(pid) || InJobNamespace(pid);
  if (syscall(SYS_pidfd_send_signal, pidfd.get(), 0, nullptr, 0) != 0) return Verdict::kUnknown;
  return in_job ? Verdict::kInJob : Verdict::kOutside;
}

}  // namespace sandboxd
