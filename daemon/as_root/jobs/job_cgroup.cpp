#include "jobs/job_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "base/directory_listing.h"
#include "base/errors.h"
#include "config.h"

namespace sandboxd {
std::string Cgroup2Mount() {
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    // ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS
    size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, mount_point;
    fields >> id >> parent >> device >> root >> mount_point;
    if (root == "/") return mount_point;
  }
  return "";
}

namespace {

/// The daemon's own cgroup in the v2 hierarchy ("0::/path" in /proc/self/cgroup).
std::string OwnCgroup() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

}  // namespace

std::string JobCgroupsName(const std::string& run_dir) {
  std::string name = "sandboxd-jobs";
  if (run_dir != SANDBOXD_DEFAULT_RUN_DIR) {
    name += '@';
    for (char c : run_dir) name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ? c : '-';
  }
  return name;
}

std::optional<std::string> PrepareJobCgroups(const std::string& run_dir, std::string& why) {
  std::string mount = Cgroup2Mount();
  if (mount.empty()) {
    why = "no cgroup2 hierarchy is mounted";
    return std::nullopt;
  }
  std::string own = OwnCgroup();
  if (own.empty()) {
    why = "sandboxd's own cgroup2 group is unknown (/proc/self/cgroup has no 0:: line)";
    return std::nullopt;
  }
  std::string name = JobCgroupsName(run_dir);
  std::string parent = mount + (own == "/" ? "" : own) + "/" + name;
  if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
    why = "cannot create " + parent + ": " + strerror(errno);
    return std::nullopt;
  }
  if (access((parent + "/cgroup.procs").c_str(), W_OK) != 0) {
    why = parent + " is not writable";
    return std::nullopt;
  }
  // cgroup.kill exists only in the cgroups below a root (kernel 5.14 and later): probe one.
  std::string probe = parent + "/probe-" + std::to_string(getpid());
  bool can_kill = mkdir(probe.c_str(), 0755) == 0 && access((probe + "/cgroup.kill").c_str(), W_OK) == 0;
  rmdir(probe.c_str());
  if (!can_kill) {
    why = "the kernel's cgroups cannot be killed whole (cgroup.kill, Linux 5.14)";
    return std::nullopt;
  }
  // Jobs of a daemon that died: whatever of them is left goes now, and their cgroups with it.
  if (DirectoryListing listing = DirectoryListing::AtPath(parent)) {
    std::vector<std::string> leftovers;
    while (const dirent* entry = listing.Next())
      if (std::string(entry->d_name).rfind("job-", 0) == 0) leftovers.push_back(entry->d_name);
    for (const auto& name : leftovers) {
      JobCgroup leftover(parent + "/" + name, JobCgroup::kAdopt);
      leftover.KillAll();
    }
  }
  return parent;
}

JobCgroup::JobCgroup(const std::string& path, AdoptTag) : path_(path) {}

JobCgroup::JobCgroup(const std::string& parent, const std::string& name) : path_(parent + "/" + name) {
  if (mkdir(path_.c_str(), 0755) != 0) ThrowErrno("cannot create the job's cgroup " + path_);
  procs_.reset(open((path_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!procs_) {
    int error = errno;
    rmdir(path_.c_str());
    ThrowErrno(error, "cannot open " + path_ + "/cgroup.procs");
  }
}

JobCgroup::~JobCgroup() {
  procs_.reset();
  // The last processes may still be on their way out of the cgroup after the job's first one
  // was reaped: a few tries.
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (rmdir(path_.c_str()) == 0 || errno != EBUSY) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

namespace {

/// How long EndRemains sleeps between looks at cgroup.events at most.
constexpr std::chrono::milliseconds kEndRemainsSlice{5};

/// Whether the group's cgroup.events (`events`, open) says a process is in it or below it;
/// nullopt when it cannot be read.
std::optional<bool> Populated(int events) {
  char text[256];
  ssize_t got;
  while ((got = pread(events, text, sizeof text - 1, 0)) < 0 && errno == EINTR) {
  }
  if (got <= 0) return std::nullopt;
  text[got] = '\0';
  std::istringstream fields(text);
  std::string key, value;
  while (fields >> key >> value)
    if (key == "populated") return value == "1";
  return std::nullopt;
}

}  // namespace

void JobCgroup::KillAll() {
  UniqueFd kill(open((path_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC));
  if (kill) {
    ssize_t ignored = write(kill.get(), "1", 1);
    (void)ignored;
  }
}

void JobCgroup::EndRemains(std::chrono::milliseconds grace) {
  // A job's last processes are often still on their way out when its first one is reaped (the
  // sandbox's init tears down its mount namespace last, an RCU grace period). They leave by
  // themselves, and waiting for that is cheaper than the kill: writing cgroup.kill waits for the
  // kernel's cgroup_mutex, which a process entering a cgroup (the next job's start, made ahead
  // while this one ran) holds through an RCU grace period, and that delayed jobs' ends by up to
  // 17 ms. What is still there after `grace` is killed. The job's end is announced only after
  // this returns, so nothing of the job outlives its announced end either way.
  UniqueFd events(open((path_ + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (events) {
    std::optional<bool> populated = Populated(events.get());
    if (!populated) break;
    if (!*populated) return;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    // The kernel wakes a poll for POLLPRI when "populated" changes; a slice at a time all the
    // same, so a change missed between the read and the poll costs a slice at most.
    pollfd changed{events.get(), POLLPRI, 0};
    poll(&changed, 1, static_cast<int>(std::min<int64_t>(left.count(), kEndRemainsSlice.count())));
  }
  KillAll();
}

}  // namespace sandboxd
