#include "lifecycle/garbage_collector.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <memory>
#include <utility>

#include "lifecycle/sandbox_removal.h"
#include "logging/log.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_registry.h"
#include "sandbox/usage.h"
#include "store/store.h"

namespace sandboxd {

GarbageCollector::GarbageCollector(SandboxRegistry& registry, Store& store, const SandboxRemoval& removal, uint64_t cap_bytes,
                                   const Clock& clock)
    : registry_(registry), store_(store), removal_(removal), cap_bytes_(cap_bytes), clock_(clock) {}

std::vector<GcRemoval> GarbageCollector::Collect() {
  std::lock_guard lock(mutex_);
  std::vector<GcCandidate> candidates;
  std::map<std::string, std::shared_ptr<Sandbox>> by_id;
  uint64_t cap = cap_bytes_;
  std::vector<std::pair<std::string, int64_t>> used;
  std::map<std::string, int64_t> recorded;  // becomes recorded_last_used_: destroyed ones drop out
  for (const auto& sandbox : registry_.List(0)) {
    by_id[sandbox->id()] = sandbox;
    // Idleness survives a restart (to within a collection's interval): what changed since
    // the last collection is recorded, all in one transaction.
    int64_t last_used = sandbox->last_used_usec();
    auto known = recorded_last_used_.find(sandbox->id());
    if (known == recorded_last_used_.end() || known->second != last_used) used.emplace_back(sandbox->id(), last_used);
    recorded[sandbox->id()] = last_used;
    // Sizes matter only under a cap; measuring every layer costs a walk of it.
    uint64_t bytes = cap ? MeasureSandbox(*sandbox).total() : 0;
    candidates.push_back({sandbox->id(), !sandbox->gate().active(), sandbox->running_jobs(), sandbox->created_usec(),
                          sandbox->last_used_usec(), sandbox->ttl_sec(), bytes, sandbox->owner()});
  }
  store_.SetLastUsed(used);
  recorded_last_used_ = std::move(recorded);
  std::vector<GcRemoval> removed;
  for (auto& removal : ChooseGarbage(candidates, cap, clock_.NowUsec())) {
    auto sandbox = by_id[removal.id];
    try {
      // As a destroy: a job or operation that started meanwhile keeps it.
      removal_.Forget(*sandbox, "collect");
    } catch (const std::exception& e) {
      LogAbout({removal.id, sandbox->owner()}, spdlog::level::info, "garbage collection left sandbox {} alone: {}", removal.id,
               e.what());
      continue;
    }
    LogAbout({removal.id, sandbox->owner()}, spdlog::level::info, "garbage collection removed sandbox {} of uid {}: {}", removal.id,
             sandbox->owner(), removal.why);
    removal_.Remove(sandbox);
    removed.push_back(std::move(removal));
  }
  return removed;
}

}  // namespace sandboxd
