#pragma once
/// The hosts a job may reach by name (`--allow-host HOST[:PORT][,HOST[:PORT]...]`, and
/// sandboxd.conf's `[Network] AllowedHosts=`, which lists what any user may allow without
/// polkit). A rule is a host name or `*.SUFFIX` (subdomains of SUFFIX only, never SUFFIX itself)
/// and one port, or none for the web's two (443 and 80). Names are compared in lower case,
/// without a trailing dot; an address is never a host rule: a job reaches hosts by name.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandboxd::network {

/// The ports a rule without one allows.
inline constexpr uint16_t kDefaultPorts[] = {443, 80};
/// At most this many rules a job or a sandbox carries (and the admin's list).
inline constexpr size_t kMaxHostRules = 256;

struct HostRule {
  std::string pattern;           ///< "pypi.org" or "*.example.org", lower case
  std::optional<uint16_t> port;  ///< nullopt: kDefaultPorts
  bool operator==(const HostRule&) const = default;
};

/// The rules of a comma-separated list; an empty list (or only commas) gives none. Throws
/// Error{kInvalidArgument} naming the item that is not a host name with an optional port (an
/// address, `*` alone, a wildcard over a top-level domain, a port out of 1..65535).
std::vector<HostRule> ParseHostRules(std::string_view text);
/// The list as ParseHostRules reads it back ("pypi.org,*.example.org:8443").
std::string FormatHostRules(const std::vector<HostRule>& rules);
std::string FormatHostRule(const HostRule& rule);

/// The name in the form rules compare it in: lower case, no trailing dot; nullopt when it is
/// not a host name (labels of letters, digits, '-' and '_', 1..63 bytes each, 253 in all).
std::optional<std::string> CanonicalHostName(std::string_view name);

/// Whether some rule lets a job reach `name` (canonical) on `port`.
bool AllowsHost(const std::vector<HostRule>& rules, std::string_view name, uint16_t port);
/// Whether some rule names `name` (canonical) on any port: its lookups are answered.
bool AllowsName(const std::vector<HostRule>& rules, std::string_view name);
/// Whether everything `requested` allows, `granted` allows too (the admin's list covering a
/// user's request, so that polkit is not asked): a name or wildcard within a wildcard, on
/// ports the granting rule allows.
bool Covers(const std::vector<HostRule>& granted, const std::vector<HostRule>& requested);

}  // namespace sandboxd::network
