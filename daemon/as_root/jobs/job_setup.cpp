#include "jobs/job_setup.h"

#include <limits.h>
#include <stdlib.h>

#include "base/errors.h"
#include "jobs/bwrap_args.h"
#include "sandbox/root_validation.h"

namespace sandboxd {

std::string ResolveJobCwd(const std::string& cwd, const std::vector<std::string>& roots, const std::string& sandbox_id,
                          bool outside_means_first_root) {
  if (cwd.empty()) return roots.front();
  if (cwd[0] != '/') throw Error(Code::kInvalidPath, "working directory '" + cwd + "' is not an absolute path");
  std::string normalised;
  size_t pos = 1;
  while (pos <= cwd.size()) {
    size_t end = cwd.find('/', pos);
    if (end == std::string::npos) end = cwd.size();
    std::string part = cwd.substr(pos, end - pos);
    if (part == "." || part == "..")
      throw Error(Code::kInvalidPath, "working directory '" + cwd + "' must not contain '.' or '..'");
    if (!part.empty()) normalised += "/" + part;
    pos = end + 1;
  }
  if (normalised.empty()) normalised.push_back('/');  // (= "/" trips a GCC 12 -Wrestrict false alarm)
  for (const auto& root : roots) {
    if (PathHolds(root, normalised)) return normalised;
  }
  if (outside_means_first_root) return roots.front();
  throw Error(Code::kInvalidPath, "working directory " + normalised + " is not inside a root of sandbox " + sandbox_id);
}

std::vector<std::string> JobEnvironment(const UserCredentials& user, const std::string& sandbox_name, bool on_terminal,
                                        const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", user.home},
      {"USER", user.name},
      {"LOGNAME", user.name},
      {"SHELL", user.shell},
      {"LANG", "C.UTF-8"},
  };
  if (on_terminal) {
    // (A sandbox's name is letters, digits, '.', '_' and '-': nothing a prompt expands.)
    env["PS1"] = "(" + sandbox_name + ") $ ";
    env["debian_chroot"] = sandbox_name;
  }
  for (const auto& [name, value] : extra) {
    // A name with '=' or NUL would be read back as another variable than the one checked here.
    if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
      throw Error(Code::kInvalidArgument, "environment variable name '" + name + "' is not valid");
    if (value.find('\0') != std::string::npos)
      throw Error(Code::kInvalidArgument, "environment variable " + name + " holds a NUL byte");
    env[name] = value;
  }
  env["SANDBOXD_SANDBOX"] = sandbox_name;
  std::vector<std::string> result;
  for (const auto& [name, value] : env) result.push_back(name + "=" + value);
  return result;
}

std::vector<std::string> HostFilesJobsNeed() {
  char resolved[PATH_MAX];
  if (realpath("/etc/resolv.conf", resolved) == nullptr) return {};
  for (const auto& dir : kJobPrivateDirs)
    if (PathHolds(dir, resolved)) return {resolved};
  return {};
}

std::vector<std::pair<std::string, std::string>> NameFilesOfAllowlistedJobs(const std::string& resolv_conf, const std::string& hosts) {
  std::vector<std::pair<std::string, std::string>> files;
  char resolved[PATH_MAX];
  if (realpath("/etc/resolv.conf", resolved)) files.emplace_back(resolv_conf, resolved);
  if (realpath("/etc/hosts", resolved)) files.emplace_back(hosts, resolved);
  return files;
}

}  // namespace sandboxd
