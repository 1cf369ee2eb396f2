#pragma once
/// Where the work of every call runs: the worker threads, shared fairly between users
/// (worker_pool.h), never the bus loop. A user's calls in flight are capped ([Limits]
/// MaxCallsInFlightPerUser=) on the bus loop, before a call is queued, so one user cannot fill
/// the queue the others wait in.

#include <sys/types.h>

#include <sdbus-c++/sdbus-c++.h>

#include <cstddef>
#include <memory>
#include <utility>

#include "runtime/output_relay.h"
#include "runtime/worker_pool.h"
#include "bus/caller.h"
#include "bus/dbus_util.h"

namespace sandboxd {

class CallGate {
 public:
  /// The worker threads that serve calls, and how many of them one user's calls may hold at
  /// once: calls that wait (a polkit prompt, a slow reader) hold theirs.
  static constexpr size_t kWorkers = 16;
  static constexpr size_t kWorkersPerUser = 4;

  explicit CallGate(size_t max_in_flight_per_user);
  /// Waits for the calls still running, for a while (WaitForCalls).
  ~CallGate();

  /// Whether `caller` may have one more call in flight; when not, answers `result` with the
  /// refusal (kQuotaExceeded naming the uid and the limit). On the bus loop, before RunForCaller.
  template <typename... Outs>
  bool Admit(const Caller& caller, sdbus::Result<Outs...>& result) {
    try {
      CheckInFlight(caller.uid);
      return true;
    } catch (...) {
      result.returnError(CurrentExceptionAsDBusError());
      return false;
    }
  }
  /// Runs `work` for a call of `uid`'s on a worker, in turn with other users' calls. Move-only
  /// callables are fine (an sdbus::Result travels with its work). Work must not throw.
  template <typename F>
  void RunForCaller(uid_t uid, F&& work) {
    if (workers_) workers_->Post(uid, std::forward<F>(work));
  }
  /// How every asynchronous method is served: the caller taken on the bus loop, while the
  /// message is there (callers inside jobs are refused: TakeCaller), admitted (Admit), then
  /// `work(caller)` run on a worker, its return value or what it threw the reply (ReplyWith).
  /// Authorizing is the work's first step: polkit can take minutes.
  template <typename... Outs, typename Work>
  void Serve(const sdbus::IObject& object, sdbus::Result<Outs...>&& result, Work&& work) {
    Caller caller;
    if (!TakeCaller(object, result, caller)) return;
    ServeTaken(caller, std::move(result), std::forward<Work>(work));
  }
  /// Serve, for a face that has taken the caller itself (and checked more on the bus loop).
  template <typename... Outs, typename Work>
  void ServeTaken(const Caller& caller, sdbus::Result<Outs...>&& result, Work&& work) {
    if (!Admit(caller, result)) return;
    RunForCaller(caller.uid, [result = std::move(result), work = std::forward<Work>(work), caller]() mutable {
      ReplyWith(result, [&] { return work(caller); });
    });
  }
  /// Runs the daemon's own `work` (for nobody waiting) on a worker. Work must not throw.
  template <typename F>
  void RunDaemonWork(F&& work) {
    if (workers_) workers_->Post(kDaemonWork, std::forward<F>(work));
  }

  /// Starts the relay that writes calls' output into callers' fds (output_relay.h), so that no
  /// worker waits on a reader. Once, before the first call that writes into an fd.
  void StartRelay(std::string spool_dir, int64_t stall_ms, uint64_t max_unread);
  OutputRelay& relay() { return *relay_; }

  /// Calls queued or running, or waiting on their reader.
  size_t Busy() const;
  /// At exit: waits for the calls still running. A worker may be waiting for a human at a
  /// polkit prompt, or on a reader that stopped: not for ever. The pool is then left to the
  /// process's exit (its threads are stuck in calls that end with it).
  void WaitForCalls();

 private:
  void CheckInFlight(uid_t uid) const;

  /// The key of the daemon's own work in the pool: no user's.
  static constexpr uid_t kDaemonWork = static_cast<uid_t>(-1);
  size_t max_in_flight_per_user_;
  /// Destroyed after the workers (which may be writing into its spools).
  std::unique_ptr<OutputRelay> relay_;
  std::unique_ptr<WorkerPool> workers_;
};

}  // namespace sandboxd
