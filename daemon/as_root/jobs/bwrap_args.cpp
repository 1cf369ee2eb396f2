#include "jobs/bwrap_args.h"

#include "base/errors.h"

namespace sandboxd {
namespace {

void CheckNoNul(const std::string& text, const char* what) {
  if (text.find('\0') != std::string::npos) throw Error(Code::kInvalidArgument, std::string("a NUL byte in ") + what + " of a job");
}

}  // namespace

BwrapInvocation BuildBwrapArgs(const BwrapConfig& config) {
  std::vector<std::string> args;
  auto add = [&args](std::initializer_list<std::string> items) { args.insert(args.end(), items); };
  // The whole host read-only: a job may read what its owner may read, and write nowhere but
  // its roots (where writes land in the overlay's upper, not in the live tree).
  add({"--ro-bind", "/", "/"});
  add({"--dev", "/dev"});   // fresh minimal /dev: no host devices, no host ptys
  add({"--proc", "/proc"}); // a /proc of the job's own pid namespace
  // Without the network, nothing of the host's: sysfs lists the interfaces of the namespace
  // that mounted it (the host's), so that list is hidden; netlink and /proc/net show the job's
  // own loopback.
  if (!config.network)
    for (const char* dir : {"/sys/class/net", "/sys/devices/virtual/net"}) add({"--tmpfs", dir});
  // Private temporary directories, before the root binds so that a root under /tmp stays visible.
  for (const auto& dir : kJobPrivateDirs) add({"--tmpfs", dir});
  // Directories of homes: an empty tmpfs each, where the job finds its owner's home (bound
  // back) and, as bwrap makes their mount points, the paths of its roots; nothing of another
  // user's. Before the roots' binds, or it would cover a root inside it. Mode 0755 so that
  // the way to the owner's home stays open; read-only at the end (below), so the job, which
  // owns the tmpfs in its user namespace, can neither plant files there nor chmod it.
  for (const auto& cover : config.covers) {
    add({"--perms", "0755", "--tmpfs", cover.path});
    for (const auto& [path, target] : cover.symlinks) add({"--symlink", target, path});
    for (const auto& dir : cover.binds) add({"--ro-bind", dir, dir});
  }
  if (!config.scratch_home.merged.empty()) add({"--bind", config.scratch_home.merged, config.scratch_home.real_path});
  for (const auto& root : config.roots) add({"--bind", root.merged, root.real_path});
  args.insert(args.end(), config.hiding.begin(), config.hiding.end());
  for (const auto& file : config.host_files) add({"--ro-bind", file, file});
  for (const auto& [file, path] : config.replaced_files) add({"--ro-bind", file, path});
  // (connect() needs no write access to the mount: read-only, the job cannot replace them.)
  for (const auto& socket : config.allowed_sockets) add({"--ro-bind", socket, socket});
  // (bwrap looks a bind's source up on the host, so the starter's own path is found there.)
  if (!config.starter.empty()) add({"--ro-bind", config.starter, config.starter});
  // Only now: any bind above may have needed its mount point made inside a cover (a root in
  // another user's shared directory, an allowed socket, the starter of a build tree).
  for (const auto& cover : config.covers) add({"--remount-ro", cover.path});
  add({"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"});
  if (!config.network) add({"--unshare-net"});  // only a private loopback
  // The job dies with the daemon's worker rather than lingering unsupervised, and runs in its
  // own session so it cannot push input into the caller's terminal (TIOCSTI).
  add({"--die-with-parent", "--new-session"});
  if (!config.cwd.empty()) add({"--chdir", config.cwd});
  if (config.json_status_fd >= 0) add({"--json-status-fd", std::to_string(config.json_status_fd)});
  if (config.block_fd >= 0) add({"--block-fd", std::to_string(config.block_fd)});
  // bwrap itself runs with the (empty) environment the daemon gives it; the job's variables
  // are set only for the command, inside the sandbox.
  args.push_back("--clearenv");
  for (const auto& entry : config.env) {
    CheckNoNul(entry, "the environment");
    size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0)
      throw Error(Code::kInvalidArgument, "environment entry '" + entry + "' is not NAME=VALUE");
    add({"--setenv", entry.substr(0, equals), entry.substr(equals + 1)});
  }
  for (const auto& arg : args) CheckNoNul(arg, "the sandbox's paths");

  BwrapInvocation invocation;
  invocation.options = std::move(args);
  invocation.argv = {config.bwrap, "--args", std::to_string(config.args_fd), "--"};
  // The command stays on bwrap's command line (bwrap wants it there): it is the job's own,
  // as visible in ps as the job's processes are.
  for (const auto& arg : config.command) CheckNoNul(arg, "the command");
  invocation.argv.insert(invocation.argv.end(), config.command.begin(), config.command.end());
  return invocation;
}

std::string BwrapArgsData(const std::vector<std::string>& options) {
  std::string data;
  for (const auto& option : options) {
    data += option;
    data.push_back('\0');
  }
  return data;
}

}  // namespace sandboxd
