#include "net_forwarder/upstream_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>

#include <algorithm>
#include <cstring>

#include "network/made_up_addresses.h"

namespace sandboxd::network {
namespace {

/// The IPv4 address an IPv4 or IPv4-mapped IPv6 address carries, host byte order.
std::optional<uint32_t> Ipv4Of(const IpAddress& address) {
  const uint8_t* b = address.bytes.s6_addr;
  if (address.family == AF_INET) return uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 | uint32_t{b[2]} << 8 | b[3];
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (address.family == AF_INET6 && std::memcmp(b, kMapped, sizeof kMapped) == 0)
    return uint32_t{b[12]} << 24 | uint32_t{b[13]} << 16 | uint32_t{b[14]} << 8 | b[15];
  return std::nullopt;
}

bool InRange(uint32_t address, uint32_t network, int prefix) {
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (address & mask) == (network & mask);
}

std::optional<std::string_view> ForbiddenIpv4(uint32_t a) {
  if (InRange(a, 0x00000000, 8)) return "an unspecified address";
  if (InRange(a, 0x7f000000, 8)) return "a loopback address";
  if (InRange(a, 0xa9fe0000, 16)) return "a link-local address";
  if (InRange(a, 0xe0000000, 4)) return "a multicast address";
  if (InRange(a, 0xf0000000, 4)) return "a reserved or broadcast address";
  if (InRange(a, kMadeUpNetwork, kMadeUpPrefix)) return "an address of the job's own name server";
  return std::nullopt;
}

}  // namespace

bool IpAddress::operator==(const IpAddress& other) const {
  auto mine = Ipv4Of(*this), theirs = Ipv4Of(other);
  if (mine || theirs) return mine == theirs;
  return family == other.family && std::memcmp(&bytes, &other.bytes, sizeof bytes) == 0;
}

std::optional<IpAddress> IpAddressOf(const sockaddr* address) {
  IpAddress ip;
  if (address->sa_family == AF_INET) {
    ip.family = AF_INET;
    std::memcpy(ip.bytes.s6_addr, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
  } else if (address->sa_family == AF_INET6) {
    ip.family = AF_INET6;
    ip.bytes = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  } else {
    return std::nullopt;
  }
  return ip;
}

std::string ToString(const IpAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(address.family, &address.bytes, text, sizeof text);
  return text;
}

std::optional<std::string_view> ForbiddenUpstream(const IpAddress& address, const std::vector<IpAddress>& host_addresses) {
  if (auto v4 = Ipv4Of(address)) {
    if (auto why = ForbiddenIpv4(*v4)) return why;
  } else if (address.family == AF_INET6) {
    const in6_addr& a = address.bytes;
    if (IN6_IS_ADDR_UNSPECIFIED(&a)) return "an unspecified address";
    if (IN6_IS_ADDR_LOOPBACK(&a)) return "a loopback address";
    if (IN6_IS_ADDR_LINKLOCAL(&a) || IN6_IS_ADDR_SITELOCAL(&a)) return "a link-local address";
    if (IN6_IS_ADDR_MULTICAST(&a)) return "a multicast address";
    // IPv4-compatible (::a.b.c.d, deprecated): what it reaches depends on the host's routes.
    if (IN6_IS_ADDR_V4COMPAT(&a)) return "an IPv4-compatible address";
  } else {
    return "not an IP address";
  }
  if (std::find(host_addresses.begin(), host_addresses.end(), address) != host_addresses.end()) return "an address of this host";
  return std::nullopt;
}

std::optional<std::vector<IpAddress>> HostAddresses() {
  std::vector<IpAddress> addresses;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  for (ifaddrs* entry = list; entry; entry = entry->ifa_next)
    if (entry->ifa_addr)
      if (auto ip = IpAddressOf(entry->ifa_addr)) addresses.push_back(*ip);
  freeifaddrs(list);
  return addresses;
}

}  // namespace sandboxd::network
