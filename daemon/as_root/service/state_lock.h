#pragma once
/// One daemon per state directory. Two would each recover, mount and commit the same
/// sandboxes; and under --idle-exit a daemon that D-Bus activation starts may meet the one
/// that is leaving. The lock (flock on STATE/lock, released by the kernel when the holder
/// exits, however it exits) makes the newcomer wait for the leaver and refuses a second daemon
/// started by hand.

#include <chrono>
#include <string>

#include "unique_fd.h"

namespace sandboxd {

/// Takes the lock of `state_dir`, waiting up to `patience` for a holder to go; throws an Error
/// naming the directory and the holder's pid otherwise. Hold the returned fd for the daemon's life.
UniqueFd LockStateDirectory(const std::string& state_dir, std::chrono::milliseconds patience);

}  // namespace sandboxd
