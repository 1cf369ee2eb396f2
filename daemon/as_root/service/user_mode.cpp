#include "service/user_mode.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace sandboxd {
namespace {

/// $NAME when it is set to an absolute path (the XDG rule: relative values are ignored).
std::string AbsoluteEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? value : "";
}

/// The runtime directory the login manager makes for the user (pam_systemd's /run/user/UID)
/// when XDG_RUNTIME_DIR is not in the environment, as when the bus that activates sandboxd was
/// never told it: used only if it is a directory of the user's own that no one else may enter.
std::string LoginRuntimeDir() {
  std::string dir = "/run/user/" + std::to_string(getuid());
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077) != 0) return "";
  return dir;
}

}  // namespace

std::string ApplyUserModeDefaults(DaemonOptions& options, bool state_given, bool run_given, bool config_given) {
  options.user_mode = true;
  std::string home = AbsoluteEnv("HOME");
  if (!state_given) {
    std::string state = AbsoluteEnv("XDG_STATE_HOME");
    if (state.empty() && home.empty()) return "sandboxd --user needs HOME or XDG_STATE_HOME (or --state-dir) for its state";
    options.state_dir = (state.empty() ? home + "/.local/state" : state) + "/sandboxd";
  }
  if (!run_given) {
    std::string runtime = AbsoluteEnv("XDG_RUNTIME_DIR");
    if (runtime.empty()) runtime = LoginRuntimeDir();
    if (runtime.empty())
      return "sandboxd --user needs a runtime directory: XDG_RUNTIME_DIR is not set and /run/user/" + std::to_string(getuid()) +
             " is not a directory of the user's own (mode 0700); set XDG_RUNTIME_DIR (for D-Bus activation: "
             "dbus-update-activation-environment XDG_RUNTIME_DIR) or give --run-dir";
    options.run_dir = runtime + "/sandboxd";
  }
  if (!config_given) {
    std::string config = AbsoluteEnv("XDG_CONFIG_HOME");
    options.config_path = (config.empty() ? home + "/.config" : config) + "/sandboxd/sandboxd.conf";
  }
  return "";
}

}  // namespace sandboxd
