#pragma once
/// Garbage collection carried out: every minute (and on Manager.CollectGarbage), the sandboxes
/// garbage_collection.h chooses are destroyed exactly as a destroy would (a job or operation
/// that started meanwhile keeps its sandbox), one collection at a time. Each pass also records
/// every sandbox's last use, so that idleness survives a restart to within a pass.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/clock.h"
#include "lifecycle/garbage_collection.h"

namespace sandboxd {

class SandboxRegistry;
class SandboxRemoval;
class Store;

class GarbageCollector {
 public:
  /// `cap_bytes`: [Storage] Cap= (0: none). `clock` says when it is (expiry).
  GarbageCollector(SandboxRegistry& registry, Store& store, const SandboxRemoval& removal, uint64_t cap_bytes,
                   const Clock& clock = TheSystemClock());

  /// Removes what ChooseGarbage chooses now; returns what it removed and why.
  std::vector<GcRemoval> Collect();

 private:
  SandboxRegistry& registry_;
  Store& store_;
  const SandboxRemoval& removal_;
  uint64_t cap_bytes_;
  const Clock& clock_;
  std::mutex mutex_;                                   ///< one collection at a time
  std::map<std::string, int64_t> recorded_last_used_;  ///< under mutex_: what the store has
};

}  // namespace sandboxd
