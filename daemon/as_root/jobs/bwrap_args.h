#pragma once
/// Builds the bubblewrap command line of a job: a pure function, unit-tested for its exact
/// output, so every isolation flag is visible in one place and cannot be lost by a refactor.
/// It never lets the job's wishes reach bwrap itself: the job's environment is given to bwrap
/// as --setenv after --clearenv (bwrap runs on the host, so a variable such as LD_PRELOAD in its
/// own environment would run the owner's code outside the sandbox), and everything but the
/// command travels through an fd (--args), since it names the owner's roots and hidden paths
/// and a command line is readable by every user in ps.

#include <string>
#include <utility>
#include <vector>

namespace sandboxd {

/// Directories every job has to itself (an empty tmpfs each), whatever the host holds there.
/// /run is where the host's services keep their sockets (a read-only view would not stop a
/// connect: host_sockets.h); what a job needs from it is bound back (BwrapConfig::host_files).
inline const std::vector<std::string> kJobPrivateDirs = {"/tmp", "/var/tmp", "/run"};

struct BwrapRoot {
  std::string merged;     ///< the overlay's mount point on the host
  std::string real_path;  ///< the live root's canonical path, where the job sees it
};

/// A directory the job sees as one empty, read-only tmpfs holding only what is put back in it:
/// a directory of homes (/home) showing the job its owner's home alone (hidden_paths.h). One
/// mount however many entries the host has there, so a job's start does not grow with them.
struct BwrapCover {
  std::string path;  ///< canonical
  /// Symlinks made again in it, {path, target} as readlink gives it (/home/alice -> /data/alice
  /// when that is the owner's home).
  std::vector<std::pair<std::string, std::string>> symlinks;
  /// Host directories bound back read-only at their own path (the owner's home).
  std::vector<std::string> binds;

  bool operator==(const BwrapCover&) const = default;
};

struct BwrapConfig {
  std::string bwrap = "/usr/bin/bwrap";
  std::vector<BwrapRoot> roots;
  std::string cwd;                    ///< inside a root
  bool network = false;
  int json_status_fd = -1;            ///< fd number in bwrap's process, or -1
  /// fd number in bwrap's process from which it reads BwrapInvocation::options (--args).
  int args_fd = 4;
  /// fd number in bwrap's process on which the sandbox waits for a byte before it runs the
  /// command (--block-fd), or -1: the daemon first learns and verifies the job's pid namespace.
  int block_fd = -1;
  /// The command's whole environment, "NAME=VALUE" each (job_setup.h JobEnvironment).
  std::vector<std::string> env;
  /// Directories the job sees empty but for what is put back (hidden_paths.h): made before the
  /// roots' binds, so that a root inside one is seen at its path, and read-only only after
  /// every other mount, any of which may need bwrap to make its mount point there.
  std::vector<BwrapCover> covers;
  /// The sandbox's scratch home (create --scratch-home): its overlay of the owner's home, bound
  /// writable at the home's path after the covers (which bind the home back read-only) and
  /// before the roots and the hiding, which stay on top. Empty `merged`: none.
  BwrapRoot scratch_home;
  /// Arguments that hide paths (hidden_paths.h), placed after the roots' binds so that a
  /// hidden path inside a root is hidden on top of the root's view.
  std::vector<std::string> hiding;
  /// Host files bound read-only at their own path after the hiding: what a job needs from its
  /// private directories (the file /etc/resolv.conf points to when that is under /run).
  std::vector<std::string> host_files;
  /// {host file, path in the job}: bound read-only over the path after the host files, so that
  /// one of the daemon's stands where a host file would be (the name files of a job allowed
  /// some hosts: job_setup.h NameFilesOfAllowlistedJobs).
  std::vector<std::pair<std::string, std::string>> replaced_files;
  /// Host sockets the owner named (--allow-socket), canonical: bound at their own path last,
  /// so that neither a private directory nor a hidden path covers them.
  std::vector<std::string> allowed_sockets;
  /// The host path of the job's first program (sandboxd-job-exec), bound read-only at the same
  /// path inside the job after everything else: it is there to run wherever the daemon was
  /// installed (a build tree under /tmp, which jobs see as a private tmpfs; a hidden path). ""
  /// for none.
  std::string starter;
  std::vector<std::string> command;   ///< argv of the job, non-empty
};

struct BwrapInvocation {
  /// bwrap's own command line: the program, "--args FD", "--" and the job's command.
  std::vector<std::string> argv;
  /// Every option, read by bwrap from `args_fd` (NUL-separated, see BwrapArgsData).
  std::vector<std::string> options;
};

/// Throws Error(kInvalidArgument) for an argument or variable holding a NUL byte (it would
/// split into two of bwrap's arguments) or a variable that is not NAME=VALUE.
BwrapInvocation BuildBwrapArgs(const BwrapConfig& config);

/// `options` as bwrap's --args reads them: each followed by a NUL byte.
std::string BwrapArgsData(const std::vector<std::string>& options);

}  // namespace sandboxd
