#include "bus/job_options.h"

#include "base/errors.h"
#include "jobs/host_sockets.h"

namespace sandboxd {
namespace {

template <typename T>
T Get(const sdbus::Variant& value, const std::string& key, const char* type, const std::string& sandbox_id) {
  if (!value.containsValueOfType<T>())
    throw Error(Code::kInvalidArgument, "option '" + key + "' for a job in sandbox " + sandbox_id + " must be of type " + type);
  return value.get<T>();
}

}  // namespace

std::vector<network::HostRule> ParseAllowedHosts(const std::vector<std::string>& items, const std::string& whose) {
  std::string joined;
  for (const auto& item : items) {
    if (item.size() > 4096) throw Error(Code::kInvalidArgument, "an allowed host of over 4096 bytes for " + whose);
    joined += item + ",";
  }
  try {
    return network::ParseHostRules(joined);
  } catch (const Error& error) {
    throw Error(error.code(), std::string(error.what()) + " (for " + whose + ")");
  }
}

JobOptions ParseJobOptions(const std::map<std::string, sdbus::Variant>& options, const std::string& sandbox_id) {
  JobOptions parsed;
  for (const auto& [key, value] : options) {
    if (key == "network") {
      parsed.network = Get<bool>(value, key, "b", sandbox_id);
    } else if (key == "cwd_fallback") {
      parsed.cwd_fallback = Get<bool>(value, key, "b", sandbox_id);
    } else if (key == "live_feed") {
      parsed.live_feed = Get<bool>(value, key, "b", sandbox_id);
    } else if (key == "tty") {
      parsed.tty = Get<bool>(value, key, "b", sandbox_id);
    } else if (key == "timeout_sec") {
      parsed.timeout_sec = Get<uint64_t>(value, key, "t", sandbox_id);
      if (parsed.timeout_sec > kMaxJobTimeoutSec)
        throw Error(Code::kInvalidArgument, "timeout of " + std::to_string(parsed.timeout_sec) + " s for a job in sandbox " +
                                                sandbox_id + " is over the limit of " + std::to_string(kMaxJobTimeoutSec) + " s");
    } else if (key == "memory_max") {
      parsed.limits.memory_max = Get<uint64_t>(value, key, "t", sandbox_id);
      if (parsed.limits.memory_max < kMinJobMemoryMax)
        throw Error(Code::kInvalidArgument, "memory limit of " + std::to_string(parsed.limits.memory_max) + " bytes for a job in sandbox " +
                                                sandbox_id + " is below the least a job can start with, " +
                                                DescribeLimits({kMinJobMemoryMax, 0}).substr(7));
    } else if (key == "tasks_max") {
      parsed.limits.tasks_max = Get<uint64_t>(value, key, "t", sandbox_id);
      if (parsed.limits.tasks_max < kMinJobTasksMax)
        throw Error(Code::kInvalidArgument, "process limit of " + std::to_string(parsed.limits.tasks_max) + " for a job in sandbox " +
                                                sandbox_id + " is below the least a job can start with, " +
                                                std::to_string(kMinJobTasksMax) + " (bwrap and its init count)");
    } else if (key == "hide") {
      parsed.hide = Get<std::vector<std::string>>(value, key, "as", sandbox_id);
      if (parsed.hide.size() > kMaxHiddenPaths)
        throw Error(Code::kInvalidArgument, "more than " + std::to_string(kMaxHiddenPaths) + " hidden paths for a job in sandbox " + sandbox_id);
      for (const auto& path : parsed.hide)
        if (path.empty() || path[0] != '/')
          throw Error(Code::kInvalidPath, "hidden path '" + path + "' for a job in sandbox " + sandbox_id + " is not absolute");
    } else if (key == "allow_hosts") {
      parsed.allow_hosts = ParseAllowedHosts(Get<std::vector<std::string>>(value, key, "as", sandbox_id), "a job in sandbox " + sandbox_id);
    } else if (key == "allow_sockets") {
      parsed.allow_sockets = Get<std::vector<std::string>>(value, key, "as", sandbox_id);
      if (parsed.allow_sockets.size() > kMaxAllowedSockets)
        throw Error(Code::kInvalidArgument, "more than " + std::to_string(kMaxAllowedSockets) + " allowed sockets for a job in sandbox " + sandbox_id);
      for (const auto& path : parsed.allow_sockets)
        if (std::string why = AllowedSocketSyntaxError(path); !why.empty())
          throw Error(Code::kInvalidPath, "cannot allow socket " + path + " for a job in sandbox " + sandbox_id + ": " + why);
    } else {
      throw Error(Code::kInvalidArgument, "unknown option '" + key + "' for a job in sandbox " + sandbox_id);
    }
  }
  if (parsed.network && !parsed.allow_hosts.empty())
    throw Error(Code::kInvalidArgument, "options 'network' and 'allow_hosts' for a job in sandbox " + sandbox_id +
                                            " exclude each other: the one is every host, the other those named");
  return parsed;
}

JobRequest JobRequestFromCall(std::vector<std::string> argv, std::string cwd, std::map<std::string, std::string> env,
                              std::map<std::string, sdbus::UnixFd> fds, const std::map<std::string, sdbus::Variant>& options,
                              const std::string& sandbox_id) {
  if (argv.empty()) throw Error(Code::kInvalidArgument, "no command given to run in sandbox " + sandbox_id);
  if (argv.size() > kMaxJobArgs) throw Error(Code::kInvalidArgument, "too many arguments (more than " + std::to_string(kMaxJobArgs) + ")");
  if (env.size() > kMaxJobEnv)
    throw Error(Code::kInvalidArgument, "too many environment variables (more than " + std::to_string(kMaxJobEnv) + ")");
  JobRequest request;
  request.options = ParseJobOptions(options, sandbox_id);
  for (auto& [key, fd] : fds) {
    UniqueFd taken(fd.release());
    if (key == "stdin")
      request.stdin_fd = std::move(taken);
    else if (key == "stdout")
      request.stdout_fd = std::move(taken);
    else if (key == "stderr")
      request.stderr_fd = std::move(taken);
    else
      throw Error(Code::kInvalidArgument, "unknown stream '" + key + "' (expected stdin, stdout or stderr)");
  }
  request.argv = std::move(argv);
  request.cwd = std::move(cwd);
  request.env = std::move(env);
  return request;
}

}  // namespace sandboxd
