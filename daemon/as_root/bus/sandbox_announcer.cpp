#include "bus/sandbox_announcer.h"

#include <string>

#include "bus/owner_signal.h"
#include "object_paths.h"
#include "api.h"
#include "sandbox/sandbox.h"

namespace sandboxd {

void SandboxAnnouncer::Added(const Sandbox& sandbox) const {
  if (sdbus::IObject* manager = manager_.load())
    EmitToOwner(*manager, peers_, sandbox.owner(), api::kManagerInterface, "SandboxAdded", sdbus::ObjectPath(api::SandboxPath(sandbox.id())),
                sandbox.id(), sandbox.name());
}

void SandboxAnnouncer::Removed(const Sandbox& sandbox) const {
  if (sdbus::IObject* manager = manager_.load())
    EmitToOwner(*manager, peers_, sandbox.owner(), api::kManagerInterface, "SandboxRemoved",
                sdbus::ObjectPath(api::SandboxPath(sandbox.id())), sandbox.id());
}

void SandboxAnnouncer::StateChanged(const Sandbox& sandbox) const {
  const std::string state(ToString(sandbox.gate().life()));
  if (sdbus::IObject* manager = manager_.load())
    EmitToOwner(*manager, peers_, sandbox.owner(), api::kManagerInterface, "SandboxStateChanged",
                sdbus::ObjectPath(api::SandboxPath(sandbox.id())), sandbox.id(), state);
}

}  // namespace sandboxd
