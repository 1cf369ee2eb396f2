#pragma once
/// The end of a sandbox once it is forgotten (its record gone, marked destroyed): its D-Bus
/// objects go first (the jobs still running are cancelled there), then its mounts for good, its
/// quota layer, and its files, through the trash. Slow (a million files take minutes): run it
/// off any caller's time. Used by Destroy and by garbage collection alike.

#include <functional>
#include <memory>
#include <string>

namespace sandboxd {

class Sandbox;
class SandboxRegistry;

class SandboxRemoval {
 public:
  /// `unpublish` drops the sandbox's objects and cancels its running jobs (the bus wing's
  /// object table), and says it is gone: called before anything is unmounted.
  SandboxRemoval(SandboxRegistry& registry, std::function<void(const Sandbox&)> unpublish);

  /// Removes what is left of `sandbox`. What cannot be removed is logged, never thrown: the
  /// record is gone already, and start-up sweeps remains (SandboxRegistry::SweepOrphans).
  void Remove(const std::shared_ptr<Sandbox>& sandbox) const;

 private:
  SandboxRegistry& registry_;
  std::function<void(const Sandbox&)> unpublish_;
};

}  // namespace sandboxd
