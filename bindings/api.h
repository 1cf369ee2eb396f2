#pragma once
/// The vocabulary of the D-Bus API that sandboxd and sandboxctl share: bus and interface
/// names, error names and flag bits. It must never disagree with dbus/*.xml or DESIGN.md.

#include <cstdint>
#include <string_view>

namespace sandboxd::api {

inline constexpr const char* kBusName = "org.sandboxd.Sandbox1";
inline constexpr const char* kManagerPath = "/org/sandboxd/Sandbox1";
inline constexpr const char* kSandboxPathPrefix = "/org/sandboxd/Sandbox1/sandbox/";
inline constexpr const char* kJobPathPrefix = "/org/sandboxd/Sandbox1/job/";
inline constexpr const char* kManagerInterface = "org.sandboxd.Sandbox1.Manager";
inline constexpr const char* kSandboxInterface = "org.sandboxd.Sandbox1.Sandbox";
inline constexpr const char* kJobInterface = "org.sandboxd.Sandbox1.Job";

// Error names (fixed by the contract).
inline constexpr const char* kErrorPrefix = "org.sandboxd.Sandbox1.Error.";
inline constexpr const char* kAccessDenied = "org.freedesktop.DBus.Error.AccessDenied";
inline constexpr const char* kInteractiveAuthorizationRequired =
    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired";

// Bits of the `flags` arguments.
inline constexpr uint64_t kFlagAllowInteractive = 1;  ///< polkit may prompt for a password
inline constexpr uint64_t kFlagCommitAll = 2;         ///< Commit: approve every pending change first
inline constexpr uint64_t kFlagEveryChange = 2;       ///< Approve, Reject: every change
inline constexpr uint64_t kFlagForce = 4;             ///< Commit: over conflicts
inline constexpr uint64_t kFlagEveryUser = 2;         ///< GetUsage: every user's sandboxes (polkit manage)

// polkit action ids (fixed by the contract).
inline constexpr const char* kActionCreate = "org.sandboxd.sandbox1.create";
inline constexpr const char* kActionCommit = "org.sandboxd.sandbox1.commit";
inline constexpr const char* kActionNetwork = "org.sandboxd.sandbox1.network";
inline constexpr const char* kActionManage = "org.sandboxd.sandbox1.manage";

}  // namespace sandboxd::api
