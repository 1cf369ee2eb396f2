#include "base/errors.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "base/name_table.h"

namespace sandboxd {
namespace {

constexpr std::pair<Code, std::string_view> kNames[] = {
    {Code::kNotFound, "org.sandboxd.Sandbox1.Error.NotFound"},
    {Code::kInvalidPath, "org.sandboxd.Sandbox1.Error.InvalidPath"},
    {Code::kInvalidArgument, "org.sandboxd.Sandbox1.Error.InvalidArgument"},
    {Code::kOverlap, "org.sandboxd.Sandbox1.Error.Overlap"},
    {Code::kConflict, "org.sandboxd.Sandbox1.Error.Conflict"},
    {Code::kQuotaExceeded, "org.sandboxd.Sandbox1.Error.QuotaExceeded"},
    {Code::kBusy, "org.sandboxd.Sandbox1.Error.Busy"},
    {Code::kInvalidState, "org.sandboxd.Sandbox1.Error.InvalidState"},
    {Code::kTooLarge, "org.sandboxd.Sandbox1.Error.TooLarge"},
    {Code::kAccessDenied, "org.freedesktop.DBus.Error.AccessDenied"},
    {Code::kInteractiveAuthorizationRequired, "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"},
    {Code::kFailed, "org.freedesktop.DBus.Error.Failed"},
};

}  // namespace

std::string_view DBusErrorName(Code code) { return NameOf(kNames, code, "org.freedesktop.DBus.Error.Failed"); }

Code CodeFromDBusName(std::string_view name) { return ValueOf<Code>(kNames, name).value_or(Code::kFailed); }

void ThrowErrno(const std::string& what) { ThrowErrno(errno, what); }

void ThrowErrno(int err, const std::string& what) {
  throw Error(Code::kFailed, what + ": " + std::strerror(err));
}

}  // namespace sandboxd
