#pragma once
/// One connection of a job through its forwarder (forwarder.h): which name it is for (by the
/// made-up address the job connected to), whether the name is allowed on the port, where the
/// name leads on the host (never to the host itself), and then the bytes both ways, the first
/// of the job's looked at for a TLS server name that must be the name's.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "network/host_rules.h"
#include "network/refusal.h"
#include "unique_fd.h"

namespace sandboxd::network {

struct RelayContext {
  const std::vector<HostRule>& rules;
  std::function<std::optional<std::string>(const std::array<uint8_t, 4>&)> name_of;
  std::function<void(const Refusal&)> report;
};

/// Serves `connection` (accepted, non-blocking) to its end; the job's connection is closed on
/// a refusal, which is reported.
void RelayConnection(UniqueFd connection, uint16_t port, const RelayContext& context);

/// Reports `connection`, one redirected to the refusing socket, as refused: the name (or the
/// address, when the job's name server never gave it) and port it was meant for, from
/// SO_ORIGINAL_DST. The caller closes it.
void ReportOtherPort(int connection, const RelayContext& context);

}  // namespace sandboxd::network
