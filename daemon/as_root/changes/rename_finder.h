#pragma once
/// The renames of a sandbox's change set (renames.h): proposed from metadata by the daemon,
/// confirmed by content in sandboxd-helper as the owner. The helper runs only when some root
/// has a deleted and an added entry of the same type and size.

#include <string>
#include <vector>

#include "model/renames.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"
#include "helper_clients/owner_helpers.h"

namespace sandboxd {

SandboxRenames FindRenames(OwnerHelpers& helpers, const SandboxReader& sandbox, const std::vector<RootChanges>& scan);

}  // namespace sandboxd
