#pragma once
/// sandboxd's helper programs behind wrappers: a directory with a shell script for each program
/// the daemon starts as a helper (what the script does before it execs the real one is the
/// test's), and copies of the two that run inside a job or its namespaces. Starting the daemon
/// with SANDBOXD_HELPER naming this directory's sandboxd-helper makes it find all of them there.

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "harness.h"

namespace sandboxd::it {

/// The programs sandboxd finds beside sandboxd-helper that it starts itself (wrapped).
inline const std::vector<std::string> kHelperPrograms = {"sandboxd-helper", "sandboxd-text-helper", "sandboxd-archive-helper",
                                                         "sandboxd-job-starter", "sandboxd-net-forwarder"};

/// Fills `dir` (made afresh, readable by all, in a place jobs can see) with a wrapper of each
/// of kHelperPrograms: `script(program, real_path)` is its shell text after "#!/bin/sh", which
/// must end by exec'ing the real program. sandboxd-job-exec and sandboxd-user-overlay are
/// copied, not linked: bwrap binds sandboxd-job-exec into the job at its path, and a symlink
/// there would point the job at the build tree. Returns the path for SANDBOXD_HELPER.
inline std::string MakeWrappedPrograms(const std::string& dir,
                                       const std::function<std::string(const std::string& program, const std::string& real)>& script) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir);
  chmod(dir.c_str(), 0755);
  const std::string real_dir = fs::path(SANDBOXD_HELPER_BIN).parent_path();
  for (const auto& program : kHelperPrograms) {
    const std::string wrapper = dir + "/" + program;
    WriteWhole(wrapper, "#!/bin/sh\n" + script(program, real_dir + "/" + program));
    chmod(wrapper.c_str(), 0755);
  }
  for (const char* program : {"sandboxd-job-exec", "sandboxd-user-overlay"}) fs::copy_file(real_dir + "/" + program, dir + "/" + program);
  return dir + "/sandboxd-helper";
}

/// The world's daemon, started again on the wrapped programs at `helper` (MakeWrappedPrograms).
inline bool RestartDaemonOn(const std::string& helper) {
  World().StopDaemon();
  return World().StartDaemon({}, {"SANDBOXD_HELPER=" + helper});
}

/// The world's daemon started again as every other test has it, and the wrappers in `dir` gone.
inline void RestartUsualDaemon(const std::string& dir) {
  World().StopDaemon();
  World().StartDaemon();
  std::filesystem::remove_all(dir);
}

}  // namespace sandboxd::it
