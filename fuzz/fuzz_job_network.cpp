// Hostile input: what a job allowed some hosts sends its forwarder (net_forwarder/forwarder.h) and what
// reaches the daemon from it: a DNS query of the job's (any bytes to port 53), the first bytes
// of a connection (a TLS ClientHello, or not), an --allow-host list the caller typed, and a
// refusal report line from the forwarder, which runs as the owner. The same bytes go to all
// four. Beyond not crashing: an answer echoes the question it read and carries an address only
// when asked for one; a name read is a canonical host name or none; a server name read is never
// empty; rules read back from their text are the same rules; a report the daemon takes is
// bounded and reads back the same.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>
#include <string>
#include <string_view>

#include "base/errors.h"
#include "check.h"
#include "net_forwarder/client_hello.h"
#include "net_forwarder/dns_message.h"
#include "network/host_rules.h"
#include "network/refusal.h"

namespace sandboxd::fuzz {
namespace {

void CheckDns(std::span<const uint8_t> bytes) {
  std::optional<network::DnsRcode> error;
  auto query = network::ReadDnsQuery(bytes, &error);
  if (!query) {
    if (error) Require(network::DnsError(bytes, *error).size() == 12, "an error answer is a header alone");
    return;
  }
  Require(!error, "a query read has no error");
  Require(query->name.empty() || network::CanonicalHostName(query->name) == query->name, "a name read is canonical");
  Require(query->question.size() + 12 <= bytes.size(), "the question lies within the packet");
  auto answered = network::DnsAnswer(*query, network::DnsRcode::kNoError, std::array<uint8_t, 4>{198, 18, 0, 1}, 300);
  Require(answered.size() == 12 + query->question.size() + 16, "an answer is the question and one A record");
  auto refused = network::DnsAnswer(*query, network::DnsRcode::kNxDomain, std::array<uint8_t, 4>{198, 18, 0, 1}, 300);
  Require(refused.size() == 12 + query->question.size() && refused[7] == 0, "NXDOMAIN carries no address");
}

void CheckHello(std::span<const uint8_t> bytes) {
  auto hello = network::ReadClientHello(bytes);
  if (hello.server_name) {
    Require(hello.state == network::ClientHello::State::kRead, "a server name comes from a whole hello");
    Require(!hello.server_name->empty(), "a server name read is not empty");
  }
}

void CheckRules(const std::string& text) {
  std::vector<network::HostRule> rules;
  try {
    rules = network::ParseHostRules(text);
  } catch (const Error&) {
    return;
  }
  Require(network::ParseHostRules(network::FormatHostRules(rules)) == rules, "rules read back from their text are the same");
  Require(network::Covers(rules, rules), "rules cover themselves");
  for (const auto& rule : rules)
    if (!rule.pattern.starts_with("*.")) Require(network::AllowsName(rules, rule.pattern), "a named host's lookups are answered");
}

void CheckReport(const std::string& line) {
  auto refusal = network::ReadRefusalLine(line);
  if (!refusal) return;
  std::string again = network::RefusalLine(*refusal);
  Require(again.size() <= network::kMaxRefusalLine + 1, "a report taken is bounded");
  again.pop_back();
  Require(network::ReadRefusalLine(again) == refusal, "a report taken reads back the same");
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  std::string text(reinterpret_cast<const char*>(data), size);
  sandboxd::fuzz::CheckDns(bytes);
  sandboxd::fuzz::CheckHello(bytes);
  sandboxd::fuzz::CheckRules(text);
  sandboxd::fuzz::CheckReport(text);
  return 0;
}
