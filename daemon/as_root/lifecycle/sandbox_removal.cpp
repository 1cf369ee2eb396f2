#include "lifecycle/sandbox_removal.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <utility>
#include <vector>

#include "logging/log.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_registry.h"

namespace sandboxd {

SandboxRemoval::SandboxRemoval(SandboxRegistry& registry, std::function<void(const Sandbox&)> unpublish)
    : registry_(registry), unpublish_(std::move(unpublish)) {}

void SandboxRemoval::Forget(Sandbox& sandbox, const std::string& verb) const {
  ExclusiveOperation exclusive(sandbox.gate(), verb);
  registry_.Forget(sandbox.id());
  sandbox.gate().MarkDestroyed();
}

void SandboxRemoval::Remove(const std::shared_ptr<Sandbox>& sandbox) const {
  unpublish_(*sandbox);
  try {
    sandbox->UnmountForGood();
    sandbox->RemoveQuotaLayer();
    std::vector<std::string> stores;
    for (size_t i = 0; i < sandbox->roots().size(); ++i)
      if (std::find(stores.begin(), stores.end(), sandbox->paths().Store(i)) == stores.end()) stores.push_back(sandbox->paths().Store(i));
    registry_.RemoveFiles(sandbox->id(), stores);
    registry_.EmptyTrash();
  } catch (const std::exception& e) {
    LogAbout({sandbox->id(), sandbox->owner()}, spdlog::level::warn, "sandbox {}: cannot remove its files: {}", sandbox->id(),
             e.what());
  }
}

}  // namespace sandboxd
