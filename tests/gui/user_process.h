#pragma once
/// Long-running processes of an unprivileged user, started by the (root) test process for a
/// GuiSession: each in a session and process group of its own, so that it and whatever it
/// spawned stop together. The leader is never reaped before it is stopped, so its pid (and
/// process-group id) cannot be reused by another process while the test still signals it.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace sandboxd::it {

/// Who a process runs as: looked up once, before any fork.
struct UserIds {
  std::string name;
  std::string home;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  ///< supplementary groups, as initgroups would set them
};

/// The ids of `name`; nullopt (with `why`) if there is no such user.
std::optional<UserIds> LookUpUser(const std::string& name, std::string& why);

/// Forks and execs `argv` (argv[0] a path, or a name looked up in /usr/bin:/bin:/usr/sbin:/sbin)
/// as `user`, in its home, with exactly `env`, stdin /dev/null, stdout and stderr appended to
/// `log`, and `fd3` (when >= 0) as descriptor 3; no other descriptor is inherited. -1 (with
/// `why`) when it could not; a failure after the fork shows in `log` and as exit status 127.
/// It gets SIGTERM should the calling thread end first (a test killed before its destructors).
pid_t SpawnAs(const UserIds& user, const std::vector<std::string>& argv, const std::vector<std::string>& env,
              const std::string& log, int fd3, std::string& why);

/// Whether child `pid` has exited, without reaping it; its wait status in `status`.
bool HasExited(pid_t pid, int* status = nullptr);

/// "exit status N" or "killed by signal N", from a wait status.
std::string DescribeStatus(int status);

/// SIGTERM to the process group `pid` leads, SIGKILL to the group after `grace`, then reaps it.
void StopGroup(pid_t pid, std::chrono::milliseconds grace = std::chrono::seconds(5));

/// The first line read from `fd` (without its newline) before `timeout`; nullopt at end of file
/// or timeout.
std::optional<std::string> ReadLine(int fd, std::chrono::milliseconds timeout);

}  // namespace sandboxd::it
