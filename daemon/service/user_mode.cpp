#include "service/user_mode.h"

#include <cstdlib>

namespace sandboxd {
namespace {

/// $NAME when it is set to an absolute path (the XDG rule: relative values are ignored).
std::string AbsoluteEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? value : "";
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
    if (runtime.empty()) return "sandboxd --user needs XDG_RUNTIME_DIR (or --run-dir) for its runtime files";
    options.run_dir = runtime + "/sandboxd";
  }
  if (!config_given) {
    std::string config = AbsoluteEnv("XDG_CONFIG_HOME");
    options.config_path = (config.empty() ? home + "/.config" : config) + "/sandboxd/sandboxd.conf";
  }
  return "";
}

}  // namespace sandboxd
