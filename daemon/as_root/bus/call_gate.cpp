#include "bus/call_gate.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <string>

#include "base/errors.h"

namespace sandboxd {

CallGate::CallGate(size_t max_in_flight_per_user)
    : max_in_flight_per_user_(max_in_flight_per_user),
      workers_(std::make_unique<WorkerPool>(WorkerPoolLimits{.workers = kWorkers, .per_key_running = kWorkersPerUser})) {}

CallGate::~CallGate() { WaitForCalls(); }

size_t CallGate::Busy() const { return (workers_ ? workers_->Busy() : 0) + (relay_ ? relay_->Relaying() : 0); }

void CallGate::StartRelay(std::string spool_dir, int64_t stall_ms, uint64_t max_unread) {
  relay_ = std::make_unique<OutputRelay>(std::move(spool_dir), stall_ms, max_unread);
}

void CallGate::WaitForCalls() {
  if (!workers_) return;
  if (!workers_->WaitIdle(std::chrono::seconds(10))) {
    spdlog::warn("{} calls still running at exit", workers_->Busy());
    (void)workers_.release();
    (void)relay_.release();  // a stuck worker may still write into a spool of its
  }
}

void CallGate::CheckInFlight(uid_t uid) const {
  size_t most = max_in_flight_per_user_;
  // A call waiting on its reader is in flight too, though it holds no worker.
  if (workers_->InFlight(uid) + (relay_ ? relay_->Relaying(uid) : 0) >= most)
    throw Error(Code::kQuotaExceeded, "uid " + std::to_string(uid) + " has " + std::to_string(most) +
                                          " calls in flight already, the most [Limits] MaxCallsInFlightPerUser=" +
                                          std::to_string(most) + " allows; try again when some have ended");
}

}  // namespace sandboxd
