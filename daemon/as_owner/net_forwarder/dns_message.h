#pragma once
/// The DNS a job's resolver speaks (RFC 1035's wire format), as much as a job's own name server
/// needs: read a standard query of one question, answer it with an A record, no records, or an
/// error. Everything in a query is the job's to choose, so the reader takes nothing on trust:
/// a name must be a plain host name (no compression in a question, no label with a dot or a
/// byte outside a host name's), and what it cannot read gets FORMERR or no answer at all.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sandboxd::network {

inline constexpr uint16_t kDnsTypeA = 1;
inline constexpr uint16_t kDnsTypeAaaa = 28;
inline constexpr uint16_t kDnsClassIn = 1;

enum class DnsRcode : uint8_t { kNoError = 0, kFormErr = 1, kServFail = 2, kNxDomain = 3, kNotImp = 4, kRefused = 5 };

struct DnsQuery {
  uint16_t id = 0;
  uint16_t type = 0;
  uint16_t klass = 0;
  bool recursion_desired = false;
  /// The name asked about, canonical (lower case, no trailing dot); empty when the question
  /// does not name a host (answered NXDOMAIN, never looked up).
  std::string name;
  /// The question as it came, echoed in the answer.
  std::vector<uint8_t> question;
};

/// What a packet of the job's asks, or the error it gets: nullopt with `*rcode` set when the
/// packet has a readable header but no question to answer (FORMERR, NOTIMP for another opcode),
/// nullopt with `*rcode` unset when it is not a query at all (a response, under 12 bytes), which
/// gets no answer.
std::optional<DnsQuery> ReadDnsQuery(std::span<const uint8_t> packet, std::optional<DnsRcode>* rcode);

/// The answer to `query`: `address` as its one A record with `ttl`, or no record (NOERROR with
/// no data when `rcode` is kNoError).
std::vector<uint8_t> DnsAnswer(const DnsQuery& query, DnsRcode rcode, const std::optional<std::array<uint8_t, 4>>& address,
                               uint32_t ttl);
/// An error answer to a packet ReadDnsQuery could not read a question of (its id echoed).
std::vector<uint8_t> DnsError(std::span<const uint8_t> packet, DnsRcode rcode);

}  // namespace sandboxd::network
