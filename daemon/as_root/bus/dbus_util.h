#pragma once
/// What every D-Bus face needs at its handler boundary: the Caller copied out of the current
/// message, conversion of anything thrown into a D-Bus error (sdbus-c++ 1.2 aborts the daemon
/// on any exception that is not an sdbus::Error), and flag checking.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <tuple>

#include "base/errors.h"
#include "bus/bus_loop.h"
#include "bus/caller.h"

namespace sandboxd {

/// The caller of the message being handled. Only valid inside a handler; copy before going async.
/// Every handler starts with it, so it also notes the call for --idle-exit (NoteCall).
Caller CurrentCaller(const sdbus::IObject& object);

/// The sdbus::Error for the exception in flight (call inside a catch block).
sdbus::Error CurrentExceptionAsDBusError();

/// For async handlers: the caller into `caller`, or false once `result` has been answered with
/// the refusal (a job's call, a sender the bus cannot vouch for). Nothing may escape an async
/// handler: sdbus-c++ 1.2 aborts the daemon on an exception.
template <typename... Outs>
bool TakeCaller(const sdbus::IObject& object, sdbus::Result<Outs...>& result, Caller& caller) {
  try {
    caller = CurrentCaller(object);
    return true;
  } catch (...) {
    result.returnError(CurrentExceptionAsDBusError());
    return false;
  }
}

/// Marks now as the time of the last method call (steady clock, microseconds).
void NoteCall();
/// When the last method call came (0: none since start-up).
int64_t LastCallUsec();


/// Refuses flag bits outside `allowed` (Error kInvalidArgument).
void CheckFlags(uint64_t flags, uint64_t allowed);

/// Runs a sync handler body; anything thrown leaves as an sdbus::Error.
template <typename F>
auto GuardSync(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    throw CurrentExceptionAsDBusError();
  }
}

/// Answers an async call with the error being handled. Never throws: if even that reply cannot
/// be built, the caller gets a plain Failed (and the daemon goes on).
template <typename... Outs>
void ReturnCurrentError(sdbus::Result<Outs...>& result) noexcept {
  try {
    result.returnError(CurrentExceptionAsDBusError());
  } catch (...) {
    try {
      result.returnError(sdbus::Error("org.freedesktop.DBus.Error.Failed", "the reply could not be built"));
    } catch (...) {
    }
  }
  WakeBusLoop();
}

/// Replies to an async call from a worker: the body's return value, or the error it threw.
template <typename... Outs, typename F>
void ReplyWith(sdbus::Result<Outs...>& result, F&& body) {
  try {
    if constexpr (sizeof...(Outs) == 0) {
      body();
      result.returnResults();
    } else if constexpr (sizeof...(Outs) == 1) {
      result.returnResults(body());
    } else {
      std::apply([&](const auto&... outs) { result.returnResults(outs...); }, body());
    }
    WakeBusLoop();  // a reply too big for the socket at once is written by the loop (bus_loop.h)
  } catch (...) {
    ReturnCurrentError(result);
  }
}

}  // namespace sandboxd
