#pragma once
/// The identity of a D-Bus caller, copied out of the message as the bus daemon reported it
/// (never from arguments, never from /proc), before any asynchronous work begins.

#include <sys/types.h>

#include <string>

namespace sandboxd {

struct Caller {
  std::string sender;  ///< unique bus name, e.g. ":1.42"
  uid_t uid = static_cast<uid_t>(-1);  ///< effective uid per the bus daemon
  bool IsRoot() const { return uid == 0; }
};

}  // namespace sandboxd
