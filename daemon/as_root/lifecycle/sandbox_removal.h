#pragma once
/// The end of a sandbox, in two steps, the same for Destroy and for garbage collection: Forget,
/// on the caller's time (its record goes, and it is marked destroyed: from then on it is gone,
/// whatever happens next), then Remove, off it: its D-Bus objects go first (the jobs still
/// running are cancelled there), then its mounts for good, its quota layer, and its files,
/// through the trash. Remove is slow (a million files take minutes).

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

  /// Forgets `sandbox` under its exclusive hold, taken as `verb`: a job or an operation that
  /// runs keeps it (the hold's refusal, naming it, is thrown and nothing changed). Once its
  /// record is gone a restart sweeps up what is left (SandboxRegistry::SweepOrphans).
  void Forget(Sandbox& sandbox, const std::string& verb) const;

  /// Removes what is left of a forgotten `sandbox`. What cannot be removed is logged, never
  /// thrown: the record is gone already, and start-up sweeps remains (SandboxRegistry::SweepOrphans).
  void Remove(const std::shared_ptr<Sandbox>& sandbox) const;

 private:
  SandboxRegistry& registry_;
  std::function<void(const Sandbox&)> unpublish_;
};

}  // namespace sandboxd
