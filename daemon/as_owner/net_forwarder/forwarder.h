#pragma once
/// The forwarder of a job allowed some hosts (issue 43), run as the job's owner by
/// sandboxd-net-forwarder, one per job. The daemon made the job's network namespace one where
/// every IPv4 address is local, and gave the forwarder sockets made in it: a UDP socket on port
/// 53 (the job's name server, whatever address a program asks) and a listening TCP socket on
/// each port some rule allows. So whatever a program does (proxy settings or none, its own
/// resolver, an address typed in), its lookups and connections on those ports reach this
/// process, and any other port or protocol reaches nothing:
/// - a lookup of an allowed name is answered with an address made up for it
///   (made_up_addresses.h); any other name gets NXDOMAIN;
/// - a connection to a made-up address, on a port the name is allowed on, is forwarded: the
///   forwarder resolves the name on the host itself, refuses addresses of the host
///   (upstream_address.h), connects, and checks a TLS ClientHello's server name against the
///   name before anything of the job's reaches the server;
/// - a connection on any other port reaches the refusing socket (the daemon's rule in the
///   job's namespace sends it there), which reads where it was meant to go and refuses it;
/// - everything refused is reported once per host and port to the daemon.

#include <cstdint>
#include <utility>
#include <vector>

#include "network/host_rules.h"

namespace sandboxd::network {

/// Connections a job may have open through its forwarder at once; more are refused.
inline constexpr size_t kMaxForwardedConnections = 256;

struct ForwarderSetup {
  std::vector<HostRule> rules;
  int dns_fd = -1;                                  ///< UDP, bound to port 53 in the job's namespace
  std::vector<std::pair<int, uint16_t>> listeners;  ///< {listening TCP socket there, its port}
  int refusing_fd = -1;                             ///< listening there: connections on other ports
  int report_fd = -1;                               ///< refusals, a line each (refusal.h)
  int life_fd = -1;                                 ///< the daemon's pipe: end of file when the job has ended
};

/// Serves the job until `life_fd` reads end of file, then ends the process (_exit 0); returns an
/// exit status only when it cannot serve.
int RunForwarder(const ForwarderSetup& setup);

}  // namespace sandboxd::network
