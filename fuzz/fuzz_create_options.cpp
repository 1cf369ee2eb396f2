// Hostile input: the options a{sv} of Manager.CreateSandbox, which any local user can send with
// any keys and any D-Bus types (the bus only guarantees well-formed values). The fuzz bytes choose
// keys (Create's, Run's and random ones) and values of every basic type, arrays, dicts and
// structs. Beyond not crashing or throwing anything but sandboxd::Error: the options are accepted
// exactly when every key is known with its type and range (none is ever ignored), accepted values
// arrive unchanged (and an absent one stays unset, for the configured default), and a refusal is
// InvalidArgument or InvalidPath, naming an unknown key. Seeds: fuzz/make-create-options-seeds.

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include <sdbus-c++/sdbus-c++.h>

#include "base/errors.h"
#include "bus/create_options.h"
#include "bus/job_options.h"
#include "jobs/host_sockets.h"
#include "allowed_hosts_model.h"
#include "bus_values.h"
#include "check.h"
#include "path_syntax.h"

namespace sandboxd::fuzz {
namespace {

/// Create's keys, then Run's, which a confused client might send to Create.
constexpr const char* kKeys[] = {"name", "network", "shared", "hide", "allow_sockets", "ttl_sec", "quota_bytes", "made_by_try", "scratch_home",
                                 "allow_hosts", "cwd_fallback", "tty", "timeout_sec", "memory_max", "tasks_max"};
constexpr size_t kCreateKeys = 10;
/// The D-Bus type of each of Create's keys, in kKeys' order.
constexpr const char* kCreateTypes[kCreateKeys] = {"s", "b", "b", "as", "as", "t", "t", "b", "b", "as"};

/// Whether ParseCreateOptions must take `key` = `value` (create_options.h), decided without it.
bool Acceptable(const std::string& key, const sdbus::Variant& value) {
  std::string type = value.peekValueType();
  if (key == "name") return type == "s";
  if (key == "network" || key == "shared" || key == "made_by_try" || key == "scratch_home") return type == "b";
  if (key == "ttl_sec") return type == "t" && value.get<uint64_t>() >= 1 && value.get<uint64_t>() <= kMaxSandboxTtlSec;
  if (key == "quota_bytes") return type == "t" && value.get<uint64_t>() >= kMinSandboxQuotaBytes;
  if (key == "allow_hosts") return AllowedHostsOf(value).has_value();
  if ((key != "hide" && key != "allow_sockets") || type != "as") return false;
  auto paths = value.get<std::vector<std::string>>();
  size_t most = key == "hide" ? kMaxHiddenPaths : kMaxAllowedSockets;
  return paths.size() <= most && std::all_of(paths.begin(), paths.end(), PlainlyAbsolute);
}

bool Arrived(const CreateOptions& parsed, const std::map<std::string, sdbus::Variant>& options) {
  auto value = [&]<typename T>(const char* key, T fallback) {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second.get<T>();
  };
  auto optional = [&]<typename T>(const char* key, std::optional<T> parsed_value) {
    auto it = options.find(key);
    return it == options.end() ? !parsed_value : parsed_value == it->second.get<T>();
  };
  return optional("name", parsed.name) && parsed.network == value("network", false) && parsed.shared == value("shared", false) &&
         parsed.hide == value("hide", std::vector<std::string>{}) &&
         parsed.allow_sockets == value("allow_sockets", std::vector<std::string>{}) && optional("ttl_sec", parsed.ttl_sec) &&
         optional("quota_bytes", parsed.quota_bytes) && parsed.made_by_try == value("made_by_try", false) &&
         parsed.scratch_home == value("scratch_home", false) &&
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
    CreateOptions parsed = ParseCreateOptions(options);
    Require(first_bad == options.end(), "options with a bad key, type or value are refused");
    Require(!fuzz::NetworkAndHosts(options), "the whole network and some hosts at once are refused");
    Require(fuzz::Arrived(parsed, options), "accepted options arrive unchanged");
  } catch (const Error& e) {
    Require(first_bad != options.end() || fuzz::NetworkAndHosts(options), "acceptable options are accepted");
    Require(e.code() == Code::kInvalidArgument || e.code() == Code::kInvalidPath, "a refusal is InvalidArgument or InvalidPath");
    if (first_bad == options.end()) return 0;  // network and hosts at once
    // Only a path's syntax (hidden or an allowed socket) is an InvalidPath.
    Require(e.code() == Code::kInvalidArgument || first_bad->first == "hide" || first_bad->first == "allow_sockets",
            "only a hidden path or an allowed socket is refused as InvalidPath");
    std::string message = e.what();
    auto create_keys_end = std::begin(fuzz::kKeys) + fuzz::kCreateKeys;
    auto known = std::find(std::begin(fuzz::kKeys), create_keys_end, first_bad->first);
    if (known == create_keys_end) {
      Require(message.find("'" + first_bad->first + "'") != std::string::npos, "an unknown key is named");
    } else {
      // (The message may quote the caller's value, so only its start tells.)
      Require(!message.starts_with("unknown option"), "a known key is not called unknown");
      if (first_bad->second.peekValueType() != fuzz::kCreateTypes[known - std::begin(fuzz::kKeys)])
        Require(message.find("'" + first_bad->first + "'") != std::string::npos, "a key of the wrong type is named");
    }
  }
  return 0;
}
