#pragma once
/// Where a sandbox is in its life, as its record keeps it (store.h). Suspend and resume move it
/// through a state of their own each, recorded before their first file moves, so that a daemon
/// killed at any instant finds at start-up what to take back or finish (suspension.h).

#include <optional>
#include <string_view>

namespace sandboxd {

enum class SandboxState {
  kActive,      ///< its layers are mounted or mountable; jobs may run
  kSuspending,  ///< its layers are being archived (intact until kSuspended)
  kSuspended,   ///< its layers are archives; nothing runs
  kResuming,    ///< its archives are being unpacked (intact until kActive)
};

/// The API's and the store's name ("active", "suspended", ...).
std::string_view ToString(SandboxState state);
std::optional<SandboxState> SandboxStateFromString(std::string_view name);

}  // namespace sandboxd
