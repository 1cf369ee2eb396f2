#include "bus/dbus_util.h"

#include "jobs/job_senders.h"
#include "utf8.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace sandboxd {
namespace {

/// The most of an error message sent (what a person reads, or a program shows, of it).
constexpr size_t kMaxErrorMessageBytes = 1u << 20;

/// Who a sender is: its uid, and whether its process runs inside a job.
struct SenderFacts {
  uid_t uid = 0;
  bool in_job = false;
};

/// Asking the bus daemon about a sender is a round trip per call. The answers cannot change
/// for the life of a connection (the bus records uid and pid at connect time, and a process
/// can neither leave a job's cgroup and pid namespace nor enter one on its own) and a unique
/// name is never given to another connection on the same bus, so they are remembered per
/// unique name; the oldest answers are dropped first.
class SenderCache {
 public:
  bool Find(const std::string& sender, SenderFacts& facts) {
    std::lock_guard lock(mutex_);
    auto it = uids_.find(sender);
    if (it == uids_.end()) return false;
    facts = it->second;
    return true;
  }
  void Remember(const std::string& sender, SenderFacts facts) {
    std::lock_guard lock(mutex_);
    if (!uids_.emplace(sender, facts).second) return;
    order_.push_back(sender);
    if (order_.size() > kCapacity) {
      uids_.erase(order_.front());
      order_.pop_front();
    }
  }

 private:
  static constexpr size_t kCapacity = 1024;
  std::mutex mutex_;
  std::unordered_map<std::string, SenderFacts> uids_;
  std::deque<std::string> order_;
};

SenderCache& Senders() {
  static SenderCache cache;
  return cache;
}

/// Refuses a caller inside a job: a job must never drive sandboxd, whatever socket it found.
void RefuseJobs(const SenderFacts& facts) {
  if (facts.in_job) throw Error(Code::kAccessDenied, "sandboxd refuses calls from inside a sandbox's job");
}

std::atomic<int64_t> last_call_usec{0};

int64_t MonotonicUsec() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int64_t LastCallUsec() { return last_call_usec.load(); }

void NoteCall() { last_call_usec.store(MonotonicUsec()); }

Caller CurrentCaller(const sdbus::IObject& object) {
  NoteCall();
  const sdbus::Message* message = object.getCurrentlyProcessedMessage();
  if (message == nullptr) throw Error(Code::kAccessDenied, "cannot tell who is calling");
  Caller caller;
  caller.sender = message->getSender();
  if (caller.sender.empty() || caller.sender[0] != ':') throw Error(Code::kAccessDenied, "cannot tell who is calling");
  SenderFacts facts;
  if (!Senders().Find(caller.sender, facts)) {
    // The effective uid as the bus daemon recorded it at connect time: not augmented from
    // /proc, so it cannot race with the caller's process changing identity.
    facts.uid = message->getCredsEuid();
    // The pid the bus daemon recorded for the connection (SO_PEERCRED), never one the caller
    // sent; classified by what the daemon made (job_senders.h).
    pid_t pid = message->getCredsPid();
    switch (JobSenders::Instance().Classify(pid)) {
      case JobSenders::Verdict::kOutside: facts.in_job = false; break;
      case JobSenders::Verdict::kInJob: facts.in_job = true; break;
      case JobSenders::Verdict::kUnknown:
        // Its process is gone, so its pid may be another's by now: nothing to go by.
        throw Error(Code::kAccessDenied,
                    "cannot tell whether the caller runs inside a sandbox's job: its process " + std::to_string(pid) + " is gone");
    }
    Senders().Remember(caller.sender, facts);
  }
  RefuseJobs(facts);
  caller.uid = facts.uid;
  return caller;
}

sdbus::Error CurrentExceptionAsDBusError() {
  // A message may quote a name a job chose, and D-Bus carries only valid UTF-8, in messages of
  // at most 32 MiB: an error that could not be sent would take the daemon down with it (a
  // Conflict names every path, and a job can make a million).
  auto message = [](std::string_view text) { return api::CutToBytes(api::EscapeInvalidUtf8(text), kMaxErrorMessageBytes); };
  try {
    throw;
  } catch (const Error& e) {
    return sdbus::Error(std::string(DBusErrorName(e.code())), message(e.what()));
  } catch (const sdbus::Error& e) {
    return sdbus::Error(e.getName(), message(e.getMessage()));
  } catch (const std::exception& e) {
    spdlog::error("unexpected failure: {}", e.what());
    return sdbus::Error("org.freedesktop.DBus.Error.Failed", message(e.what()));
  } catch (...) {
    spdlog::error("unexpected failure of unknown type");
    return sdbus::Error("org.freedesktop.DBus.Error.Failed", "internal error");
  }
}

void CheckFlags(uint64_t flags, uint64_t allowed) {
  if (flags & ~allowed)
    throw Error(Code::kInvalidArgument, "unknown flag bits 0x" + [&] {
      char text[32];
      snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(flags & ~allowed));
      return std::string(text);
    }() + " in flags");
}

}  // namespace sandboxd
