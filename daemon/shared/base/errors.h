#pragma once
/// The one error vocabulary of sandboxd. Domain code throws Error{Code, message}; one table maps
/// each Code to its fixed D-Bus name; ToSdbusError converts anything thrown at a handler
/// boundary. Messages are one sentence naming the object and path involved.

#include <stdexcept>
#include <string>
#include <string_view>

namespace sdbus {
class Error;
}

namespace sandboxd {

enum class Code {
  kNotFound,
  kInvalidPath,
  kInvalidArgument,
  kOverlap,
  kConflict,
  kQuotaExceeded,
  kBusy,
  kInvalidState,
  kTooLarge,  ///< an answer that would not fit one D-Bus message (the message says how else to get it)
  kAccessDenied,
  kInteractiveAuthorizationRequired,
  kFailed,
};

class Error : public std::runtime_error {
 public:
  Error(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

/// "org.sandboxd.Sandbox1.Error.NotFound", "org.freedesktop.DBus.Error.AccessDenied", ...
std::string_view DBusErrorName(Code code);
/// The Code whose D-Bus name is `name`, or kFailed.
Code CodeFromDBusName(std::string_view name);
/// Throws Error{kFailed} with `what` and strerror(errno): "what: No such file or directory".
[[noreturn]] void ThrowErrno(const std::string& what);
[[noreturn]] void ThrowErrno(int err, const std::string& what);

}  // namespace sandboxd
