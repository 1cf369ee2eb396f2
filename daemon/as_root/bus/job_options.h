#pragma once
/// The options of Sandbox.Run (its `options` a{sv}), checked strictly: an unknown key, a value of
/// the wrong type or out of range is refused with a message naming it, never ignored.

#include <sdbus-c++/Types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "jobs/job_request.h"

namespace sandboxd {

inline constexpr uint64_t kMaxJobTimeoutSec = 366ull * 24 * 3600;
inline constexpr size_t kMaxHiddenPaths = 256;

inline constexpr size_t kMaxJobArgs = 9000;  // as bubblewrap's MAX_ARGS, in spirit
inline constexpr size_t kMaxJobEnv = 4096;

/// The rules of an "allow_hosts" option (as): each item one or more HOST[:PORT], comma
/// separated. Throws Error(kInvalidArgument) naming the item and `whose` ("a job in sandbox S").
std::vector<network::HostRule> ParseAllowedHosts(const std::vector<std::string>& items, const std::string& whose);

/// Throws Error(kInvalidArgument) naming the option and the sandbox.
JobOptions ParseJobOptions(const std::map<std::string, sdbus::Variant>& options, const std::string& sandbox_id);

/// Sandbox.Run's arguments as a JobRequest: a command, at most kMaxJobArgs words and
/// kMaxJobEnv variables, streams named stdin, stdout or stderr, options as above. Throws
/// Error(kInvalidArgument) naming what is wrong and the sandbox.
JobRequest JobRequestFromCall(std::vector<std::string> argv, std::string cwd, std::map<std::string, std::string> env,
                              std::map<std::string, sdbus::UnixFd> fds, const std::map<std::string, sdbus::Variant>& options,
                              const std::string& sandbox_id);

}  // namespace sandboxd
