#pragma once
/// What the daemon does, as root, to the network namespace of a job allowed some hosts
/// (issue 43), before the job's command runs: bwrap made the namespace (--unshare-net: only a
/// loopback), and the daemon makes every IPv4 address in it local (a route `local 0.0.0.0/0
/// dev lo` in the local table, the "AnyIP" of Linux), gives lo an IPv4 address besides
/// 127.0.0.1 (for lookups that ask only for the families the host has) and opens, on the any-address, a UDP
/// socket on port 53 and a listening TCP socket on each allowed port. Whatever address a
/// program of the job sends to, then, its packet stays in the namespace: a lookup reaches the
/// forwarder's name server, a connection on an allowed port reaches the forwarder, and
/// a connection on any other port, to any address but a loopback one, reaches the forwarder's
/// refusing socket (other_ports_redirect.h), which says why it failed. Nothing leaves the
/// namespace but what the forwarder, outside it, connects to. IPv6 keeps only ::1 (no route:
/// unreachable).

#include <sys/types.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "unique_fd.h"

namespace sandboxd {

struct AllowlistSockets {
  UniqueFd dns;                                          ///< UDP, port 53
  std::vector<std::pair<UniqueFd, uint16_t>> listeners;  ///< TCP, listening, one per port
  UniqueFd refusing;                                     ///< TCP, listening: every other port's connections
};

/// The network namespace of a job's verified namespace init (job_namespace.h): `pid` is only
/// looked up in /proc while `pidfd` shows the same process alive, and a namespace that is the
/// daemon's own (bwrap made none) is refused. Throws Error{kFailed}.
UniqueFd OpenJobNetworkNamespace(pid_t pid, int pidfd);

/// Sets up the namespace `netns` as above and returns its sockets. Done on a thread of its own
/// that ends in that namespace: no other thread of the daemon ever enters it. Throws
/// Error{kFailed} naming what could not be done; the job must then not run.
AllowlistSockets PrepareAllowlistNamespace(int netns, const std::vector<uint16_t>& ports);

}  // namespace sandboxd
