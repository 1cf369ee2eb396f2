#pragma once
/// Where the bus the daemon serves can be reached through the file system, so that jobs are
/// given no view of it (a job must never drive sandboxd). Hiding is the first wall; the
/// daemon's refusal of callers inside jobs (job_senders.h) is the one that holds where a
/// socket was missed (an abstract socket, a bus a job finds some other way).

#include <string>
#include <vector>

namespace sandboxd {

/// The socket paths (unix:path=...) of a D-Bus address, %-escapes decoded; abstract and
/// other transports have none.
std::vector<std::string> UnixSocketPaths(const std::string& address);

/// What jobs must not see of the daemon's bus: the system bus's directory (/run/dbus) and
/// every socket path of the address the daemon connected to (DBUS_SYSTEM_BUS_ADDRESS, or
/// DBUS_SESSION_BUS_ADDRESS in user mode).
std::vector<std::string> BusPathsHiddenFromJobs(bool user_mode);

}  // namespace sandboxd
