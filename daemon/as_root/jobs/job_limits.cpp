#include "jobs/job_limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/directory_listing.h"
#include "base/errors.h"

namespace sandboxd {
namespace {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Writes `value` to the cgroup file `path`; false (errno set) on failure.
bool WriteCgroupFile(const std::string& path, const std::string& value) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd && write(fd.get(), value.data(), value.size()) == static_cast<ssize_t>(value.size());
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  for (std::string w; words >> w;)
    if (w == word) return true;
  return false;
}

/// The mount point of the v1 hierarchy that holds `controller` ("" if none) and the root of
/// that mount, from /proc/self/mountinfo.
std::string V1Mount(const std::string& controller) {
  std::ifstream mounts("/proc/self/mountinfo");
  for (std::string line; std::getline(mounts, line);) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 7, "cgroup ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, mount_point;
    fields >> id >> parent >> device >> root >> mount_point;
    std::istringstream tail(line.substr(dash + 3));
    std::string type, source, options;
    tail >> type >> source >> options;
    std::istringstream option_list(options);
    for (std::string option; std::getline(option_list, option, ',');)
      if (option == controller && root == "/") return mount_point;
  }
  return "";
}

/// The daemon's own group in the v1 hierarchy of `controller` ("N:a,b:/path" lines).
std::string OwnV1Group(const std::string& controller) {
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::istringstream controllers(line.substr(first + 1, second - first - 1));
    for (std::string name; std::getline(controllers, name, ',');)
      if (name == controller) return line.substr(second + 1);
  }
  return "";
}

/// Removes the cgroup `path`, waiting a little for its last processes to leave it.
void RemoveGroup(const std::string& path) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (rmdir(path.c_str()) == 0 || errno != EBUSY) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

/// Makes (or checks) the jobs' group of a v1 hierarchy and removes the job groups a dead
/// daemon left there. Returns why it cannot be used, or "".
std::string PrepareV1Parent(const std::string& parent) {
  if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return "cannot create " + parent + ": " + strerror(errno);
  if (access((parent + "/cgroup.procs").c_str(), W_OK) != 0) return parent + " is not writable";
  if (DirectoryListing listing = DirectoryListing::AtPath(parent)) {
    std::vector<std::string> leftovers;
    while (const dirent* entry = listing.Next())
      if (std::string(entry->d_name).rfind("job-", 0) == 0) leftovers.push_back(entry->d_name);
    for (const auto& name : leftovers) rmdir((parent + "/" + name).c_str());
  }
  return "";
}

/// On a pure cgroup2 system: hands the memory and pids controllers down to `jobs_parent`
/// (OWN/sandboxd-jobs...). A group with controllers enabled for its children may hold no
/// processes of its own (unless it is the root), so the daemon first moves into a leaf of its
/// own group, as a delegated service does. Returns the controllers now usable there.
std::string EnableV2Controllers(const std::string& jobs_parent, const std::string& wanted, std::string& why) {
  std::string own = jobs_parent.substr(0, jobs_parent.rfind('/'));
  std::string available = ReadWholeFile(own + "/cgroup.controllers");
  std::string enable;
  std::istringstream words(wanted);
  for (std::string controller; words >> controller;)
    if (HasWord(available, controller)) enable += (enable.empty() ? "+" : " +") + controller;
  if (enable.empty()) {
    why = "the cgroup2 hierarchy has no " + wanted + " controller for sandboxd";
    return "";
  }
  if (!WriteCgroupFile(own + "/cgroup.subtree_control", enable)) {
    if (errno != EBUSY) {
      why = "cannot enable " + enable + " in " + own + ": " + strerror(errno);
      return "";
    }
    // Processes in the group itself: the daemon moves into a leaf (all its threads with it).
    std::string leaf = own + "/sandboxd-daemon";
    if ((mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) || !WriteCgroupFile(leaf + "/cgroup.procs", "0") ||
        !WriteCgroupFile(own + "/cgroup.subtree_control", enable)) {
      why = "cannot enable " + enable + " in " + own + " (it holds other processes than sandboxd?): " + strerror(errno);
      return "";
    }
  }
  if (!WriteCgroupFile(jobs_parent + "/cgroup.subtree_control", enable)) {
    why = "cannot enable " + enable + " in " + jobs_parent + ": " + strerror(errno);
    return "";
  }
  return ReadWholeFile(jobs_parent + "/cgroup.subtree_control");
}

std::string Bytes(uint64_t bytes) {
  if (bytes % (1ull << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (1ull << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (1ull << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::string DescribeLimits(const JobLimits& limits) {
  std::string text;
  if (limits.memory_max) text = "memory " + Bytes(limits.memory_max);
  if (limits.tasks_max) text += (text.empty() ? "" : ", ") + std::to_string(limits.tasks_max) + " tasks";
  return text;
}

JobLimits WithDefaults(const JobLimits& asked, const JobLimits& defaults, bool memory_available, bool tasks_available) {
  JobLimits limits = asked;
  if (limits.memory_max == 0 && memory_available) limits.memory_max = defaults.memory_max;
  if (limits.tasks_max == 0 && tasks_available) limits.tasks_max = defaults.tasks_max;
  return limits;
}

std::string AboveDefaults(const JobLimits& asked, const JobLimits& defaults) {
  std::string text;
  if (defaults.memory_max != 0 && asked.memory_max > defaults.memory_max)
    text = "memory " + Bytes(asked.memory_max) + ", above [Limits] DefaultMemoryMax=" + Bytes(defaults.memory_max);
  if (defaults.tasks_max != 0 && asked.tasks_max > defaults.tasks_max)
    text += (text.empty() ? "" : "; ") + std::to_string(asked.tasks_max) + " tasks, above [Limits] DefaultTasksMax=" +
            std::to_string(defaults.tasks_max);
  return text;
}

JobLimitGroups::~JobLimitGroups() {
  for (auto& group : groups_) {
    group.procs.reset();
    if (group.owned) RemoveGroup(group.path);
  }
}

std::vector<int> JobLimitGroups::procs_fds() const {
  std::vector<int> fds;
  for (const auto& group : groups_)
    if (group.procs) fds.push_back(group.procs.get());
  return fds;
}

bool JobLimitGroups::MemoryLimitHit() const {
  if (memory_events_.empty()) return false;
  // memory.events (v2) and memory.oom_control (v1, Linux 4.13) both count "oom_kill N".
  std::istringstream lines(ReadWholeFile(memory_events_));
  for (std::string key; lines >> key;) {
    uint64_t count = 0;
    lines >> count;
    if (key == "oom_kill") return count > 0;
  }
  return false;
}

void LimitControllers::Release() const {
  if (!memory_v2_ && !memory_parent_.empty()) rmdir(memory_parent_.c_str());
  if (!pids_v2_ && !pids_parent_.empty()) rmdir(pids_parent_.c_str());
}

std::string LimitControllers::V1Parent(const std::string& mount, const std::string& own, const std::string& name) {
  if (mount.empty() || own.empty()) return "";
  return mount + (own == "/" ? "" : own) + "/" + name;
}

LimitControllers LimitControllers::Discover(const std::optional<std::string>& v2_jobs_parent, const std::string& jobs_group_name,
                                            std::string& log) {
  LimitControllers found;
  std::string v2_enabled, v2_why;
  if (v2_jobs_parent) v2_enabled = EnableV2Controllers(*v2_jobs_parent, "memory pids", v2_why);
  std::vector<std::string> notes;
  for (const std::string controller : {"memory", "pids"}) {
    std::string& parent = controller == "memory" ? found.memory_parent_ : found.pids_parent_;
    bool& v2 = controller == "memory" ? found.memory_v2_ : found.pids_v2_;
    if (HasWord(v2_enabled, controller)) {
      parent = *v2_jobs_parent;
      v2 = true;
      notes.push_back(controller + ": cgroup2");
      continue;
    }
    std::string v1 = V1Parent(V1Mount(controller), OwnV1Group(controller), jobs_group_name);
    std::string why = v1.empty() ? "no " + controller + " controller in a hierarchy sandboxd may use" : PrepareV1Parent(v1);
    if (v1.empty() && !v2_why.empty()) why = v2_why;
    if (why.empty()) {
      parent = v1;
      notes.push_back(controller + ": cgroup v1 " + v1);
    } else {
      notes.push_back(controller + ": not available (" + why + ")");
    }
  }
  log = "job limits (run --memory-max, --tasks-max): ";
  for (size_t i = 0; i < notes.size(); ++i) log += (i ? "; " : "") + notes[i];
  return found;
}

JobLimitGroups::Group LimitControllers::MakeV1Group(const std::string& path, const std::string& controller) {
  if (mkdir(path.c_str(), 0755) != 0) ThrowErrno("cannot create the job's cgroup " + path);
  UniqueFd procs(open((path + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!procs) {
    int err = errno;
    rmdir(path.c_str());
    ThrowErrno(err, "cannot open " + path + "/cgroup.procs");
  }
  return JobLimitGroups::Group{path, std::move(procs), true, controller};
}

std::unique_ptr<JobLimitGroups> LimitControllers::MakeGroups(const std::string& name) const {
  auto groups = std::make_unique<JobLimitGroups>();
  const std::pair<const std::string*, bool> wanted[] = {{&memory_parent_, memory_v2_}, {&pids_parent_, pids_v2_}};
  const char* const names[] = {"memory", "pids"};
  for (size_t i = 0; i < 2; ++i) {
    const auto& [parent, v2] = wanted[i];
    if (parent->empty() || v2) continue;
    groups->groups_.push_back(MakeV1Group(*parent + "/" + name, names[i]));
  }
  if (groups->groups_.empty()) return nullptr;
  return groups;
}

std::unique_ptr<JobLimitGroups> LimitControllers::Apply(const std::string& name, const JobLimits& limits,
                                                        const std::string& v2_group, std::unique_ptr<JobLimitGroups> premade) const {
  auto groups = premade ? std::move(premade) : std::make_unique<JobLimitGroups>();
  struct Wanted {
    uint64_t value;
    const std::string& parent;
    bool v2;
    std::string controller;  ///< as the kernel names it
    std::string what;        ///< as a person would
    /// file → value; the first is the limit itself, the others may be missing (swap accounting).
    std::vector<std::pair<std::string, std::string>> files;
  };
  std::string memory = std::to_string(limits.memory_max), tasks = std::to_string(limits.tasks_max);
  // Swap counts too, so that the limit is one the job cannot step around: none in cgroup2,
  // memory and swap together in v1 (where the kernel accounts swap at all).
  std::vector<std::pair<std::string, std::string>> memory_files =
      memory_v2_ ? std::vector<std::pair<std::string, std::string>>{{"memory.max", memory}, {"memory.swap.max", "0"}}
                 : std::vector<std::pair<std::string, std::string>>{{"memory.limit_in_bytes", memory},
                                                                    {"memory.memsw.limit_in_bytes", memory}};
  const Wanted wanted[] = {
      {limits.memory_max, memory_parent_, memory_v2_, "memory", "memory", memory_files},
      {limits.tasks_max, pids_parent_, pids_v2_, "pids", "process", {{"pids.max", tasks}}},
  };
  for (const auto& want : wanted) {
    if (want.value == 0) continue;
    if (want.parent.empty() || (want.v2 && v2_group.empty()))
      throw Error(Code::kInvalidArgument, want.what + " limits are not available on this machine: sandboxd has no " +
                                              want.controller + " cgroup controller to use (its start-up log says why)");
    std::string path = want.v2 ? v2_group : want.parent + "/" + name;
    if (!want.v2) {
      auto made = std::find_if(groups->groups_.begin(), groups->groups_.end(),
                               [&](const JobLimitGroups::Group& group) { return group.controller == want.controller; });
      if (made == groups->groups_.end()) groups->groups_.push_back(MakeV1Group(path, want.controller));
    }
    for (size_t i = 0; i < want.files.size(); ++i) {
      const auto& [file, value] = want.files[i];
      if (!WriteCgroupFile(path + "/" + file, value) && (i == 0 || errno != ENOENT))
        ThrowErrno("cannot set " + path + "/" + file + " to " + value);
    }
    if (want.controller == "memory") groups->memory_events_ = path + (want.v2 ? "/memory.events" : "/memory.oom_control");
  }
  return groups;
}

}  // namespace sandboxd
