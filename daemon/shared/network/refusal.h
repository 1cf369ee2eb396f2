#pragma once
/// A connection or name lookup of a job that the forwarder refused, as the forwarder reports it
/// to the daemon (a JSON line each on a pipe) and as the owner sees it ("pypi.example:443: not
/// allowed"). The forwarder runs as the owner, so the daemon reads these lines as the owner's
/// claims: bounded in size and number, every field checked, shown only to the owner.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::network {

/// The longest report line the daemon reads; longer ones are dropped.
inline constexpr size_t kMaxRefusalLine = 1024;

struct Refusal {
  std::string host;   ///< a canonical name, or an address as text
  uint16_t port = 0;  ///< 0: a name lookup
  std::string reason; ///< "not allowed", "resolves to a loopback address", ...
  bool operator==(const Refusal&) const = default;
};

std::string RefusalLine(const Refusal& refusal);
/// The refusal a line (without its newline) reports; nullopt for anything else.
std::optional<Refusal> ReadRefusalLine(std::string_view line);
/// "pypi.example:443: not allowed", "pypi.example (lookup): not allowed".
std::string DescribeRefusal(const Refusal& refusal);

}  // namespace sandboxd::network
