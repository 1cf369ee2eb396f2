#pragma once
/// Which addresses a job's connection may be forwarded to. A name is the job's to ask for, and
/// what it resolves to is its name server's to say: an allowed name that resolves to the host's
/// own addresses (DNS rebinding) would reach the host's services on behalf of a job that may not
/// reach them. So a forwarded connection never goes to a loopback, link-local, unspecified,
/// multicast or broadcast address, to the job's own range of made-up addresses, or to an address
/// of one of the host's interfaces; private ranges stay reachable (a company's package mirror).

#include <netinet/in.h>
#include <sys/socket.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandboxd::network {

/// An IPv4 or IPv6 address with no port.
struct IpAddress {
  int family = AF_UNSPEC;  ///< AF_INET or AF_INET6
  in6_addr bytes{};        ///< IPv4 in the first 4 bytes
  bool operator==(const IpAddress& other) const;
};

std::optional<IpAddress> IpAddressOf(const sockaddr* address);
std::string ToString(const IpAddress& address);

/// Why a connection may not go to `address` ("a loopback address", "an address of this
/// host"...), or nullopt when it may. IPv4-mapped IPv6 addresses are judged as IPv4.
std::optional<std::string_view> ForbiddenUpstream(const IpAddress& address, const std::vector<IpAddress>& host_addresses);

/// The addresses of this host's interfaces now (getifaddrs); nullopt when they cannot be had
/// (then no connection is forwarded: which of them is the host's is unknown).
std::optional<std::vector<IpAddress>> HostAddresses();

}  // namespace sandboxd::network
