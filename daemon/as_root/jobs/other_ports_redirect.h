#pragma once
/// So that a job allowed some hosts hears why a connection on a port no rule names failed
/// (issue 43: every refusal logged and shown once per host and port): in the job's network
/// namespace, a netfilter rule sends every TCP connection to a non-loopback address on any
/// other port to one listening socket of the forwarder's, which reads where it was meant to go
/// (SO_ORIGINAL_DST), reports it and closes it. Without the rule the kernel refused such a
/// connection too (no listener), but silently: the rule adds the hint, not the barrier.
/// Loopback addresses are left alone: a job's tests may run a server of their own there. Only
/// the redirected connections are tracked (conntrack): the job's others cost no kernel entry.

#include <cstdint>
#include <string>
#include <vector>

namespace sandboxd {

/// The nftables ruleset (libnftables' syntax) for `allowed_ports`, redirecting the rest to
/// `refusing_port`. Pure, for the tests.
std::string OtherPortsRuleset(const std::vector<uint16_t>& allowed_ports, uint16_t refusing_port);

/// A port for the refusing listener: the lowest privileged port no rule allows (a job cannot
/// take one below 1024 for itself).
uint16_t RefusingPortFor(const std::vector<uint16_t>& allowed_ports);

/// Loads the ruleset into the calling thread's network namespace (the job's: called on the
/// thread that entered it). Throws Error{kFailed} with netfilter's own message.
void RedirectOtherPorts(const std::vector<uint16_t>& allowed_ports, uint16_t refusing_port);

}  // namespace sandboxd
