#pragma once
/// Builds the bubblewrap command line of a job: a pure function, unit-tested for its exact
/// output, so every isolation flag is visible in one place and cannot be lost by a refactor.

#include <string>
#include <vector>

namespace sandboxd {

/// Directories every job has to itself (an empty tmpfs each), whatever the host holds there.
inline const std::vector<std::string> kJobPrivateDirs = {"/tmp", "/var/tmp"};

struct BwrapRoot {
  std::string merged;     ///< the overlay's mount point on the host
  std::string real_path;  ///< the live root's canonical path, where the job sees it
};

struct BwrapConfig {
  std::string bwrap = "/usr/bin/bwrap";
  std::vector<BwrapRoot> roots;
  std::string cwd;                    ///< inside a root
  bool network = false;
  int json_status_fd = -1;            ///< fd number in bwrap's process, or -1
  /// Arguments that hide paths (hidden_paths.h), placed after the roots' binds so that a
  /// hidden path inside a root is hidden on top of the root's view.
  std::vector<std::string> hiding;
  std::vector<std::string> command;   ///< argv of the job, non-empty
};

std::vector<std::string> BuildBwrapArgs(const BwrapConfig& config);

}  // namespace sandboxd
