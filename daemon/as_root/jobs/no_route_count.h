#pragma once
/// How often an offline job (no network, no allowed hosts) tried to reach an address outside
/// its namespace, a name server's included: the kernel's count of packets that found no route
/// (Ip OutNoRoutes, Ip6OutNoRoutes) in the job's own network namespace, read as the job ends
/// through a thread that enters the namespace (and ends there). It tells the owner why a job
/// that failed to resolve a name failed: it has no network (run --allow-host, --network).

#include <cstdint>
#include <string_view>

namespace sandboxd {

/// The sum of OutNoRoutes in /proc/net/snmp's text and Ip6OutNoRoutes in /proc/net/snmp6's; 0
/// where neither is found.
uint64_t NoRouteCountOf(std::string_view snmp, std::string_view snmp6);

/// NoRouteCountOf of the network namespace `netns` (an fd of it); 0 when it cannot be read.
uint64_t NoRouteCount(int netns);

}  // namespace sandboxd
