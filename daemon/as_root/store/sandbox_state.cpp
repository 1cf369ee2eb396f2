#include "store/sandbox_state.h"

#include <utility>

#include "base/name_table.h"

namespace sandboxd {
namespace {

constexpr std::pair<SandboxState, std::string_view> kStateNames[] = {
    {SandboxState::kActive, "active"},
    {SandboxState::kSuspending, "suspending"},
    {SandboxState::kSuspended, "suspended"},
    {SandboxState::kResuming, "resuming"},
};

}  // namespace

std::string_view ToString(SandboxState state) { return NameOf(kStateNames, state, "unknown"); }

std::optional<SandboxState> SandboxStateFromString(std::string_view name) { return ValueOf<SandboxState>(kStateNames, name); }

}  // namespace sandboxd
