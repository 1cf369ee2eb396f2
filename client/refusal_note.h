#pragma once
/// The line a job allowed some hosts leaves on stderr (run, try) and in an MCP run's text when
/// its forwarder refused something: "sandboxd: refused 2 connections (pypi.example:443: not
/// allowed; files.example (lookup): not allowed)". Hosts are names the job chose: quoted as git
/// quotes names, and every control byte of the daemon's text shown visibly.

#include <cstdint>
#include <string>
#include <vector>

namespace sandboxctl {

struct RefusedConnection {
  std::string host;   ///< a name, or the address the job typed
  uint16_t port = 0;  ///< 0: a name lookup
  std::string reason;
};

/// "" when nothing was refused; else the line without its newline. At most three refusals are
/// named; `count` is how many there were in all.
std::string RefusalNote(const std::vector<RefusedConnection>& refused, uint32_t count);

/// The same hint for a job with no network at all whose lookups or connections found no route
/// (Job.GetStatus no_route_count): "" for none.
std::string NoNetworkNote(uint64_t no_route_count);

}  // namespace sandboxctl
