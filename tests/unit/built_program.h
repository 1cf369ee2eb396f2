#pragma once
/// Where a unit test finds one of this build's programs: daemon/NAME beside the unit tests'
/// directory in the build tree (tests/unit/unit-tests).

#include <filesystem>
#include <string>

namespace sandboxd::testing {

inline std::string BuiltDaemonProgram(const std::string& name) {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "../../daemon" / name;
}

/// sandboxd-archive-helper of this build.
inline std::string ArchiveHelperProgram() { return BuiltDaemonProgram("sandboxd-archive-helper"); }

}  // namespace sandboxd::testing
