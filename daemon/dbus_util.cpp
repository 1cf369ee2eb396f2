#include "dbus_util.h"

#include <spdlog/spdlog.h>

namespace sandboxd {

Caller CurrentCaller(const sdbus::IObject& object) {
  const sdbus::Message* message = object.getCurrentlyProcessedMessage();
  if (message == nullptr) throw Error(Code::kAccessDenied, "cannot tell who is calling");
  Caller caller;
  caller.sender = message->getSender();
  // The effective uid as the bus daemon recorded it at connect time: not augmented from
  // /proc, so it cannot race with the caller's process changing identity.
  caller.uid = message->getCredsEuid();
  try {
    caller.pid = message->getCredsPid();
  } catch (const sdbus::Error&) {
    caller.pid = 0;
  }
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
