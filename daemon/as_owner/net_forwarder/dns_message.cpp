#include "net_forwarder/dns_message.h"

#include "network/host_rules.h"

namespace sandboxd::network {
namespace {

constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxWireName = 255;  // RFC 1035 3.1: a name's wire form, length bytes included

uint16_t Read16(std::span<const uint8_t> bytes, size_t at) { return static_cast<uint16_t>(bytes[at] << 8 | bytes[at + 1]); }

void Put16(std::vector<uint8_t>& out, uint16_t value) {
  out.push_back(static_cast<uint8_t>(value >> 8));
  out.push_back(static_cast<uint8_t>(value));
}

void Put32(std::vector<uint8_t>& out, uint32_t value) {
  Put16(out, static_cast<uint16_t>(value >> 16));
  Put16(out, static_cast<uint16_t>(value));
}

/// The header of an answer: the query's id and RD, QR and RA set, AA (the job's name server
/// is the authority on what the job may reach), opcode 0.
void PutHeader(std::vector<uint8_t>& out, uint16_t id, bool recursion_desired, DnsRcode rcode, uint16_t questions, uint16_t answers) {
  Put16(out, id);
  out.push_back(static_cast<uint8_t>(0x80 | 0x04 | (recursion_desired ? 0x01 : 0)));
  out.push_back(static_cast<uint8_t>(0x80 | static_cast<uint8_t>(rcode)));
  Put16(out, questions);
  Put16(out, answers);
  Put16(out, 0);
  Put16(out, 0);
}

}  // namespace

std::optional<DnsQuery> ReadDnsQuery(std::span<const uint8_t> packet, std::optional<DnsRcode>* rcode) {
  *rcode = std::nullopt;
  if (packet.size() < kHeaderSize || (packet[2] & 0x80)) return std::nullopt;  // short, or a response
  const uint8_t opcode = (packet[2] >> 3) & 0x0f;
  if (opcode != 0) {
    *rcode = DnsRcode::kNotImp;
    return std::nullopt;
  }
  *rcode = DnsRcode::kFormErr;
  // One question and nothing else but perhaps additional records (EDNS's OPT), which are left
  // unread: the answer carries none.
  if (Read16(packet, 4) != 1 || Read16(packet, 6) != 0 || Read16(packet, 8) != 0) return std::nullopt;
  DnsQuery query;
  query.id = Read16(packet, 0);
  query.recursion_desired = packet[2] & 0x01;
  size_t at = kHeaderSize;
  std::string dotted;
  bool host_name = true;
  for (;;) {
    if (at >= packet.size()) return std::nullopt;
    const uint8_t length = packet[at];
    if (length == 0) break;
    if (length & 0xc0) return std::nullopt;  // a compression pointer (or reserved form) in a question
    if (at + 1 + length > packet.size() || at + 1 + length - kHeaderSize >= kMaxWireName) return std::nullopt;
    if (!dotted.empty()) dotted.push_back('.');
    for (size_t i = 0; i < length; ++i) {
      char c = static_cast<char>(packet[at + 1 + i]);
      // A dot inside a label would read as two labels in the dotted form: such a name is no
      // host name (nor is one with any byte a host name cannot have).
      if (c == '.' || c == '\0') host_name = false;
      dotted.push_back(c);
    }
    at += 1 + length;
  }
  ++at;  // the root label
  if (at + 4 > packet.size()) return std::nullopt;
  query.type = Read16(packet, at);
  query.klass = Read16(packet, at + 2);
  at += 4;
  query.question.assign(packet.begin() + kHeaderSize, packet.begin() + static_cast<std::ptrdiff_t>(at));
  if (host_name)
    if (auto canonical = CanonicalHostName(dotted)) query.name = std::move(*canonical);
  *rcode = std::nullopt;
  return query;
}

std::vector<uint8_t> DnsAnswer(const DnsQuery& query, DnsRcode rcode, const std::optional<std::array<uint8_t, 4>>& address,
                               uint32_t ttl) {
  std::vector<uint8_t> out;
  out.reserve(kHeaderSize + query.question.size() + 16);
  const bool answered = rcode == DnsRcode::kNoError && address.has_value();
  PutHeader(out, query.id, query.recursion_desired, rcode, 1, answered ? 1 : 0);
  out.insert(out.end(), query.question.begin(), query.question.end());
  if (answered) {
    Put16(out, 0xc000 | kHeaderSize);  // the name: a pointer to the question's
    Put16(out, kDnsTypeA);
    Put16(out, kDnsClassIn);
    Put32(out, ttl);
    Put16(out, 4);
    out.insert(out.end(), address->begin(), address->end());
  }
  return out;
}

std::vector<uint8_t> DnsError(std::span<const uint8_t> packet, DnsRcode rcode) {
  std::vector<uint8_t> out;
  out.reserve(kHeaderSize);
  PutHeader(out, packet.size() >= 2 ? Read16(packet, 0) : 0, packet.size() >= 3 && (packet[2] & 0x01), rcode, 0, 0);
  return out;
}

}  // namespace sandboxd::network
