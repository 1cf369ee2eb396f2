#include "refusal_note.h"

#include <algorithm>

#include "quote_path.h"

namespace sandboxctl {

std::string RefusalNote(const std::vector<RefusedConnection>& refused, uint32_t count) {
  count = std::max<uint32_t>(count, static_cast<uint32_t>(refused.size()));
  if (count == 0) return "";
  std::string line = "sandboxd: refused " + std::to_string(count) + (count == 1 ? " connection" : " connections");
  if (refused.empty()) return line;
  line += " (";
  const size_t named = std::min<size_t>(refused.size(), 3);
  for (size_t i = 0; i < named; ++i) {
    const auto& one = refused[i];
    if (i > 0) line += "; ";
    std::string host = sandboxd::api::QuotePath(one.host);
    line += (one.port == 0 ? host + " (lookup)" : host + ":" + std::to_string(one.port)) + ": " + one.reason;
  }
  if (count > named) line += "; " + std::to_string(count - named) + " more: sandboxctl jobs --json lists them";
  line += ")";
  return sandboxd::api::EscapeControlBytes(line);
}

std::string NoNetworkNote(uint64_t no_route_count) {
  if (no_route_count == 0) return "";
  return "sandboxd: refused " + std::to_string(no_route_count) + (no_route_count == 1 ? " attempt" : " attempts") +
         " to reach the network (a name lookup or a connection): the job has none; run --allow-host HOST[:PORT] or --network gives it some";
}

}  // namespace sandboxctl
