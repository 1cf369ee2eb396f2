#include "dbus_util.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace sandboxd {
namespace {

/// Asking the bus daemon for a sender's uid is a round trip per call. The answer cannot change
/// for the life of a connection (the bus records it at connect time) and a unique name is
/// never given to another connection on the same bus, so it is remembered per unique name;
/// the oldest answers are dropped first.
class SenderUidCache {
 public:
  bool Find(const std::string& sender, uid_t& uid) {
    std::lock_guard lock(mutex_);
    auto it = uids_.find(sender);
    if (it == uids_.end()) return false;
    uid = it->second;
    return true;
  }
  void Remember(const std::string& sender, uid_t uid) {
    std::lock_guard lock(mutex_);
    if (!uids_.emplace(sender, uid).second) return;
    order_.push_back(sender);
    if (order_.size() > kCapacity) {
      uids_.erase(order_.front());
      order_.pop_front();
    }
  }

 private:
  static constexpr size_t kCapacity = 1024;
  std::mutex mutex_;
  std::unordered_map<std::string, uid_t> uids_;
  std::deque<std::string> order_;
};

SenderUidCache& SenderUids() {
  static SenderUidCache cache;
  return cache;
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
  if (SenderUids().Find(caller.sender, caller.uid)) return caller;
  // The effective uid as the bus daemon recorded it at connect time: not augmented from
  // /proc, so it cannot race with the caller's process changing identity.
  caller.uid = message->getCredsEuid();
  SenderUids().Remember(caller.sender, caller.uid);
  return caller;
}

sdbus::Error CurrentExceptionAsDBusError() {
  try {
    throw;
  } catch (const Error& e) {
    return sdbus::Error(std::string(DBusErrorName(e.code())), e.what());
  } catch (const sdbus::Error& e) {
    return e;
  } catch (const std::exception& e) {
    spdlog::error("unexpected failure: {}", e.what());
    return sdbus::Error("org.freedesktop.DBus.Error.Failed", e.what());
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
