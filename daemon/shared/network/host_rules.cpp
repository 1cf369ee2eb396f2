#include "network/host_rules.h"

#include <algorithm>
#include <charconv>

#include "base/errors.h"
#include "quote_path.h"

namespace sandboxd::network {
namespace {

constexpr size_t kMaxNameLength = 253;
constexpr size_t kMaxLabelLength = 63;

bool LabelByte(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; }

/// Whether the item looks like an IPv4 or IPv6 address rather than a name: a name's last label
/// is never all digits (no top-level domain is), and ':' only appears in addresses.
bool LooksLikeAddress(std::string_view host) {
  if (host.find(':') != std::string_view::npos || host.starts_with('[')) return true;
  if (host.ends_with('.')) host.remove_suffix(1);  // "443." is the name "443", which reads as an address
  size_t last_dot = host.rfind('.');
  std::string_view last = last_dot == std::string_view::npos ? host : host.substr(last_dot + 1);
  return !last.empty() && std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<uint16_t> Ports(const HostRule& rule) {
  if (rule.port) return {*rule.port};
  return {std::begin(kDefaultPorts), std::end(kDefaultPorts)};
}

bool PortAllowed(const HostRule& rule, uint16_t port) {
  auto ports = Ports(rule);
  return std::find(ports.begin(), ports.end(), port) != ports.end();
}

/// Whether `name` (a name, or a "*.suffix" pattern) lies within `pattern`: the pattern itself,
/// or a subdomain of a wildcard's suffix (a wildcard within: its suffix at or below).
bool Within(std::string_view pattern, std::string_view name) {
  if (!pattern.starts_with("*.")) return pattern == name;
  std::string_view suffix = pattern.substr(1);  // ".example.org": the dot keeps labels whole
  if (name.starts_with("*.")) return name.substr(1).ends_with(suffix);
  return name.size() > suffix.size() && name.ends_with(suffix);
}

HostRule ParseItem(std::string_view item) {
  auto refuse = [item](const std::string& why) -> Error {
    // (Quoted as git quotes names: the item is the caller's, and may hold any byte.)
    return Error(Code::kInvalidArgument, "allowed host " + api::QuotePath(item) + " " + why);
  };
  std::string_view host = item;
  std::optional<uint16_t> port;
  if (!LooksLikeAddress(item.substr(0, item.rfind(':')))) {
    if (size_t colon = item.rfind(':'); colon != std::string_view::npos) {
      host = item.substr(0, colon);
      std::string_view digits = item.substr(colon + 1);
      unsigned value = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < 1 || value > 65535 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw refuse("has no port in 1..65535 after ':'");
      port = static_cast<uint16_t>(value);
    }
  }
  if (LooksLikeAddress(host)) throw refuse("is an address: hosts are allowed by name (HOST[:PORT])");
  bool wildcard = host.starts_with("*.");
  auto name = CanonicalHostName(wildcard ? host.substr(2) : host);
  if (!name) throw refuse("is not a host name (letters, digits, '-' and '_' in labels of 1 to 63, '*.' only in front)");
  if (wildcard && name->find('.') == std::string::npos)
    throw refuse("covers a whole top-level domain: name at least two labels after '*.'");
  return HostRule{wildcard ? "*." + *name : *name, port};
}

}  // namespace

std::optional<std::string> CanonicalHostName(std::string_view name) {
  if (name.ends_with('.')) name.remove_suffix(1);
  if (name.empty() || name.size() > kMaxNameLength) return std::nullopt;
  std::string canonical;
  canonical.reserve(name.size());
  size_t label = 0;
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '.') {
      if (label == 0) return std::nullopt;
      label = 0;
    } else if (!LabelByte(c) || ++label > kMaxLabelLength) {
      return std::nullopt;
    }
    canonical.push_back(c);
  }
  if (label == 0) return std::nullopt;
  return canonical;
}

std::vector<HostRule> ParseHostRules(std::string_view text) {
  std::vector<HostRule> rules;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.empty()) continue;
    HostRule rule = ParseItem(item);
    if (std::find(rules.begin(), rules.end(), rule) != rules.end()) continue;
    if (rules.size() == kMaxHostRules)
      throw Error(Code::kInvalidArgument, "more than " + std::to_string(kMaxHostRules) + " allowed hosts");
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::string FormatHostRule(const HostRule& rule) {
  return rule.port ? rule.pattern + ":" + std::to_string(*rule.port) : rule.pattern;
}

std::string FormatHostRules(const std::vector<HostRule>& rules) {
  std::string text;
  for (const auto& rule : rules) {
    if (!text.empty()) text += ',';
    text += FormatHostRule(rule);
  }
  return text;
}

bool AllowsHost(const std::vector<HostRule>& rules, std::string_view name, uint16_t port) {
  return std::any_of(rules.begin(), rules.end(),
                     [&](const HostRule& rule) { return Within(rule.pattern, name) && PortAllowed(rule, port); });
}

bool AllowsName(const std::vector<HostRule>& rules, std::string_view name) {
  return std::any_of(rules.begin(), rules.end(), [&](const HostRule& rule) { return Within(rule.pattern, name); });
}

bool Covers(const std::vector<HostRule>& granted, const std::vector<HostRule>& requested) {
  return std::all_of(requested.begin(), requested.end(), [&](const HostRule& wanted) {
    for (uint16_t port : Ports(wanted)) {
      bool covered = std::any_of(granted.begin(), granted.end(), [&](const HostRule& grant) {
        return Within(grant.pattern, wanted.pattern) && PortAllowed(grant, port);
      });
      if (!covered) return false;
    }
    return true;
  });
}

}  // namespace sandboxd::network
