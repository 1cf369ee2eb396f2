#include "bus/create_options.h"

#include "base/errors.h"
#include "bus/job_options.h"
#include "jobs/hidden_paths.h"
#include "jobs/host_sockets.h"

namespace sandboxd {
namespace {

/// `value` as a T, whose D-Bus signature is `type`; refused naming the key and `what` T is.
template <typename T>
T Get(const sdbus::Variant& value, const std::string& key, const char* type, const char* what) {
  if (value.peekValueType() != type) throw Error(Code::kInvalidArgument, "option '" + key + "' must be " + what);
  return value.get<T>();
}

}  // namespace

CreateOptions ParseCreateOptions(const std::map<std::string, sdbus::Variant>& options) {
  CreateOptions parsed;
  for (const auto& [key, value] : options) {
    if (key == "name") {
      parsed.name = Get<std::string>(value, key, "s", "a string");
    } else if (key == "network") {
      parsed.network = Get<bool>(value, key, "b", "a boolean");
    } else if (key == "shared") {
      parsed.shared = Get<bool>(value, key, "b", "a boolean");
    } else if (key == "scratch_home") {
      parsed.scratch_home = Get<bool>(value, key, "b", "a boolean");
    } else if (key == "made_by_try") {
      parsed.made_by_try = Get<bool>(value, key, "b", "a boolean");
    } else if (key == "hide") {
      parsed.hide = Get<std::vector<std::string>>(value, key, "as", "an array of strings");
      if (parsed.hide.size() > kMaxHiddenPaths)
        throw Error(Code::kInvalidArgument, "more than " + std::to_string(kMaxHiddenPaths) + " hidden paths for a sandbox");
      // Checked before any lookup: a relative or ".." path would mean something else once
      // resolved (hidden_paths.h).
      for (const auto& path : parsed.hide)
        if (auto why = HiddenPathSyntaxError(path, /*allow_home=*/false))
          throw Error(Code::kInvalidPath, "cannot hide " + path + " in a new sandbox: " + *why);
    } else if (key == "allow_hosts") {
      parsed.allow_hosts = ParseAllowedHosts(Get<std::vector<std::string>>(value, key, "as", "an array of strings"), "a new sandbox");
    } else if (key == "allow_sockets") {
      parsed.allow_sockets = Get<std::vector<std::string>>(value, key, "as", "an array of strings");
      if (parsed.allow_sockets.size() > kMaxAllowedSockets)
        throw Error(Code::kInvalidArgument, "more than " + std::to_string(kMaxAllowedSockets) + " allowed sockets for a sandbox");
      for (const auto& path : parsed.allow_sockets)
        if (std::string why = AllowedSocketSyntaxError(path); !why.empty())
          throw Error(Code::kInvalidPath, "cannot allow socket " + path + " in a new sandbox: " + why);
    } else if (key == "ttl_sec") {
      uint64_t ttl_sec = Get<uint64_t>(value, key, "t", "a uint64");
      if (ttl_sec == 0 || ttl_sec > kMaxSandboxTtlSec)
        throw Error(Code::kInvalidArgument, "a ttl of " + std::to_string(ttl_sec) + " s is not between 1 s and 10 years");
      parsed.ttl_sec = ttl_sec;
    } else if (key == "quota_bytes") {
      uint64_t quota_bytes = Get<uint64_t>(value, key, "t", "a uint64");
      if (quota_bytes < kMinSandboxQuotaBytes)
        throw Error(Code::kInvalidArgument, "a quota of " + std::to_string(quota_bytes) +
                                                " bytes is below the least a sandbox can work with, 1 MiB");
      parsed.quota_bytes = quota_bytes;
    } else {
      throw Error(Code::kInvalidArgument, "unknown option '" + key + "' for CreateSandbox");
    }
  }
  if (parsed.network && !parsed.allow_hosts.empty())
    throw Error(Code::kInvalidArgument, "options 'network' and 'allow_hosts' for a new sandbox exclude each other: the one is every host, the other those named");
  return parsed;
}

}  // namespace sandboxd
