#pragma once
/// What every sandboxctl verb needs: global options, the bus connection, and turning a SANDBOX
/// argument (id or name) into its object path.

#include <sdbus-c++/sdbus-c++.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace sandboxctl {

/// A usage error (exit status 2), thrown by verbs that find their arguments inconsistent.
struct UsageError {
  std::string message;
};

struct Context {
  bool json = false;
  bool json_short = false;  ///< --json=short: one line, no indentation (--json, --json=pretty: indented)
  /// `value` as --json asked for it.
  std::string Json(const nlohmann::json& value) const { return json_short ? value.dump() : value.dump(2); }
  bool no_ask_password = false;
  bool no_pager = false;  ///< --no-pager: diff writes to stdout even on a terminal
  bool show_ignored = false;  ///< --ignored: changes, diff and review show what git ignores
  bool show_git_files = false;  ///< changes --git: a repository's own data as files (git_fold.h)
  bool user_mode = false;

  /// Connects on first use (the system bus; DBUS_SYSTEM_BUS_ADDRESS is honoured).
  sdbus::IConnection& Bus();
  /// A connection of its own to the same bus (the session bus with --user), for a call made
  /// from another thread while Bus() is busy.
  std::unique_ptr<sdbus::IConnection> OpenBus() const;
  /// flags argument bit 0: may polkit prompt?
  uint64_t InteractiveFlag() const;
  /// The object path of SANDBOX (id or name); a D-Bus NotFound error if there is none.
  std::string ResolveSandbox(const std::string& id_or_name);
  /// Without a call where SANDBOX has the form of an id (names never do: sandboxd refuses such
  /// names), as its object path follows from it; else as ResolveSandbox. The first call on the
  /// path tells whether there is such a sandbox: on UnknownObject a caller falls back to
  /// ResolveSandbox, for GetSandbox's NotFound.
  std::string ResolveSandboxFast(const std::string& id_or_name);
  /// `message` (the daemon's, which names sandboxes by id) with each sandbox the user named by
  /// its name shown as they typed it: "sandbox web (3ba23e3aa3b41c6f) is suspended".
  std::string NamedAsTyped(std::string message) const;

 private:
  std::unique_ptr<sdbus::IConnection> bus_;
  std::map<std::string, std::string> resolved_;  ///< id or name → object path
};

}  // namespace sandboxctl
