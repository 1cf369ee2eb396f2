#include "service/host_check.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace sandboxd {
namespace {

std::optional<long> ReadNumber(const char* path) {
  std::ifstream in(path);
  long value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

std::string ReadAll(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The container sandboxd runs in, by the marks container managers leave: the `container=`
/// variable they give pid 1 (systemd's convention), docker's and podman's files, and bwrap as
/// pid 1 of our pid namespace.
std::string DetectContainer() {
  std::string environ = ReadAll("/proc/1/environ");
  for (size_t at = 0; at < environ.size();) {
    size_t end = environ.find('\0', at);
    if (end == std::string::npos) end = environ.size();
    std::string entry = environ.substr(at, end - at);
    if (entry.rfind("container=", 0) == 0 && entry.size() > 10) return entry.substr(10);
    at = end + 1;
  }
  if (access("/.dockerenv", F_OK) == 0) return "docker";
  if (access("/run/.containerenv", F_OK) == 0) return "podman";
  std::string comm = ReadAll("/proc/1/comm");
  if (comm == "bwrap\n") return "bwrap";
  return "";
}

}  // namespace

HostFacts ReadHostFacts() {
  HostFacts facts;
  facts.container = DetectContainer();
  facts.max_user_namespaces = ReadNumber("/proc/sys/user/max_user_namespaces");
  facts.unprivileged_userns_clone = ReadNumber("/proc/sys/kernel/unprivileged_userns_clone");
  facts.apparmor_restrict_userns = ReadNumber("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  facts.overlay_listed = ReadAll("/proc/filesystems").find("\toverlay\n") != std::string::npos;
  return facts;
}

std::vector<std::string> DiagnoseHost(const HostFacts& facts) {
  std::vector<std::string> problems;
  std::string where = facts.container.empty() ? "" : " (sandboxd runs inside " + facts.container + ")";
  if (!facts.overlay_error.empty() || !facts.overlay_listed)
    problems.push_back("overlayfs cannot be mounted here" + where + ": " +
                       (facts.overlay_error.empty() ? "the kernel lists no overlay file system (modprobe overlay)"
                                                    : facts.overlay_error) +
                       "; no sandbox can be created or set up");
  if (!facts.bwrap_error.empty()) {
    std::string why;
    if (facts.max_user_namespaces && *facts.max_user_namespaces == 0)
      why = "user namespaces are off (user.max_user_namespaces = 0)";
    else if (facts.unprivileged_userns_clone && *facts.unprivileged_userns_clone == 0)
      why = "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)";
    else if (facts.apparmor_restrict_userns && *facts.apparmor_restrict_userns == 1)
      why = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1; "
            "give bwrap a profile that allows userns)";
    else if (!facts.container.empty())
      why = "the container does not let its processes create user, pid or network namespaces (run it with "
            "--privileged or a seccomp/AppArmor profile that allows unshare and mount)";
    else
      why = "bwrap could not set up a job";
    problems.push_back("jobs cannot run here" + where + ": " + why + "; bwrap said: " + facts.bwrap_error);
  }
  return problems;
}

}  // namespace sandboxd
