#include "bwrap_args.h"

namespace sandboxd {

std::vector<std::string> BuildBwrapArgs(const BwrapConfig& config) {
  std::vector<std::string> args = {config.bwrap};
  auto add = [&args](std::initializer_list<std::string> items) { args.insert(args.end(), items); };
  // The whole host read-only: a job may read what its owner may read, and write nowhere but
  // its roots (where writes land in the overlay's upper, not in the live tree).
  add({"--ro-bind", "/", "/"});
  add({"--dev", "/dev"});   // fresh minimal /dev: no host devices, no host ptys
  add({"--proc", "/proc"}); // a /proc of the job's own pid namespace
  // Private temporary directories, before the root binds so that a root under /tmp stays visible.
  for (const auto& dir : kJobPrivateDirs) add({"--tmpfs", dir});
  for (const auto& root : config.roots) add({"--bind", root.merged, root.real_path});
  args.insert(args.end(), config.hiding.begin(), config.hiding.end());
  add({"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"});
  if (!config.network) add({"--unshare-net"});  // only a private loopback
  // The job dies with the daemon's worker rather than lingering unsupervised, and runs in its
  // own session so it cannot push input into the caller's terminal (TIOCSTI).
  add({"--die-with-parent", "--new-session"});
  if (!config.cwd.empty()) add({"--chdir", config.cwd});
  if (config.json_status_fd >= 0) add({"--json-status-fd", std::to_string(config.json_status_fd)});
  args.push_back("--");
  args.insert(args.end(), config.command.begin(), config.command.end());
  return args;
}

}  // namespace sandboxd
