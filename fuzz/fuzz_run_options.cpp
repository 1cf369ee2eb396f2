// Hostile input: the options a{sv} of Sandbox.Run, which any local user can send with any keys
// and any D-Bus types (the bus only guarantees well-formed values). The fuzz bytes choose keys
// (Run's, Create's and random ones) and values of every basic type, arrays, dicts and structs.
// Beyond not crashing or throwing anything but sandboxd::Error: the options are accepted exactly
// when every key is known with its type and range (none is ever ignored), accepted values arrive
// unchanged, and a refusal is InvalidArgument or InvalidPath naming the sandbox, and an unknown
// key by name. Seeds: fuzz/make-run-options-seeds.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include <sdbus-c++/sdbus-c++.h>

#include "base/errors.h"
#include "bus/job_options.h"
#include "jobs/host_sockets.h"
#include "allowed_hosts_model.h"
#include "bus_values.h"
#include "check.h"
#include "path_syntax.h"

namespace sandboxd::fuzz {
namespace {

constexpr const char* kSandbox = "fuzzbox";
/// Run's keys, then Create's, which a confused client might send to Run.
constexpr const char* kKeys[] = {"network", "cwd_fallback", "tty", "live_feed", "timeout_sec", "memory_max", "tasks_max", "hide",
                                 "allow_sockets", "allow_hosts", "name", "shared", "ttl_sec", "quota_bytes"};
constexpr size_t kRunKeys = 10;

/// Whether ParseJobOptions must take `key` = `value` (job_options.h), decided without it.
bool Acceptable(const std::string& key, const sdbus::Variant& value) {
  std::string type = value.peekValueType();
  if (key == "network" || key == "cwd_fallback" || key == "tty" || key == "live_feed") return type == "b";
  if (key == "timeout_sec") return type == "t" && value.get<uint64_t>() <= kMaxJobTimeoutSec;
  if (key == "memory_max") return type == "t" && value.get<uint64_t>() >= kMinJobMemoryMax;
  if (key == "tasks_max") return type == "t" && value.get<uint64_t>() >= kMinJobTasksMax;
  if (key == "allow_hosts") return AllowedHostsOf(value).has_value();
  if ((key != "hide" && key != "allow_sockets") || type != "as") return false;
  auto paths = value.get<std::vector<std::string>>();
  // A job's hidden path need only be absolute (a job's own paths are resolved as the owner); an
  // allowed socket's is checked as a new sandbox's is.
  if (key == "hide")
    return paths.size() <= kMaxHiddenPaths &&
           std::all_of(paths.begin(), paths.end(), [](const std::string& path) { return path.starts_with("/"); });
  return paths.size() <= kMaxAllowedSockets && std::all_of(paths.begin(), paths.end(), PlainlyAbsolute);
}

bool Arrived(const JobOptions& parsed, const std::map<std::string, sdbus::Variant>& options) {
  auto value = [&]<typename T>(const char* key, T fallback) {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second.get<T>();
  };
  return parsed.network == value("network", false) && parsed.cwd_fallback == value("cwd_fallback", false) &&
         parsed.tty == value("tty", false) && parsed.live_feed == value("live_feed", true) && parsed.timeout_sec == value("timeout_sec", uint64_t{0}) &&
         parsed.limits.memory_max == value("memory_max", uint64_t{0}) &&
         parsed.limits.tasks_max == value("tasks_max", uint64_t{0}) && parsed.hide == value("hide", std::vector<std::string>{}) &&
         parsed.allow_sockets == value("allow_sockets", std::vector<std::string>{}) &&
         parsed.allow_hosts == (options.count("allow_hosts") ? *AllowedHostsOf(options.at("allow_hosts")) : std::vector<network::HostRule>{});
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  using fuzz::Require;
  FuzzedDataProvider in(data, size);
  std::map<std::string, sdbus::Variant> options = fuzz::AnyOptions(in, fuzz::kKeys);
  // The parser reads keys in the map's order and refuses at the first bad one.
  auto first_bad = std::find_if(options.begin(), options.end(), [](const auto& kv) { return !fuzz::Acceptable(kv.first, kv.second); });
  try {
    JobOptions parsed = ParseJobOptions(options, fuzz::kSandbox);
    Require(first_bad == options.end(), "options with a bad key, type or value are refused");
    Require(!fuzz::NetworkAndHosts(options), "the whole network and some hosts at once are refused");
    Require(fuzz::Arrived(parsed, options), "accepted options arrive unchanged");
  } catch (const Error& e) {
    Require(first_bad != options.end() || fuzz::NetworkAndHosts(options), "acceptable options are accepted");
    Require(e.code() == Code::kInvalidArgument || e.code() == Code::kInvalidPath, "a refusal is InvalidArgument or InvalidPath");
    std::string message = e.what();
    Require(message.find(fuzz::kSandbox) != std::string::npos, "a refusal names the sandbox");
    if (first_bad == options.end()) return 0;  // network and hosts at once: named above
    auto run_keys_end = std::begin(fuzz::kKeys) + fuzz::kRunKeys;
    bool known = std::find(std::begin(fuzz::kKeys), run_keys_end, first_bad->first) != run_keys_end;
    if (!known) Require(message.find("'" + first_bad->first + "'") != std::string::npos, "an unknown key is named");
  }
  return 0;
}
