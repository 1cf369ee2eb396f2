#pragma once
// The fuzz models' view of an `allow_hosts` option (Run's and CreateSandbox's): the host rules
// it stands for, or nullopt when it must be refused. The rules' own syntax is host_rules.h's,
// tested by its unit tests and fuzz_job_network; here it is the oracle, so that the options
// targets check what they are about (every key known, none ignored, values arriving unchanged).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sdbus-c++/sdbus-c++.h>

#include "base/errors.h"
#include "network/host_rules.h"

namespace sandboxd::fuzz {

inline std::optional<std::vector<network::HostRule>> AllowedHostsOf(const sdbus::Variant& value) {
  if (value.peekValueType() != "as") return std::nullopt;
  std::string joined;
  for (const auto& item : value.get<std::vector<std::string>>()) {
    if (item.size() > 4096) return std::nullopt;
    joined += item + ",";
  }
  try {
    return network::ParseHostRules(joined);
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// Whether `options` asks for the whole network and some hosts at once (refused after every key
/// was read).
inline bool NetworkAndHosts(const std::map<std::string, sdbus::Variant>& options) {
  auto network = options.find("network");
  auto hosts = options.find("allow_hosts");
  if (network == options.end() || hosts == options.end() || network->second.peekValueType() != "b" || !network->second.get<bool>())
    return false;
  auto rules = AllowedHostsOf(hosts->second);
  return rules && !rules->empty();
}

}  // namespace sandboxd::fuzz
