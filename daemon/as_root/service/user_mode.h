#pragma once
/// Where sandboxd --user keeps things, by the XDG base directory rules: state in
/// $XDG_STATE_HOME/sandboxd (~/.local/state/sandboxd), merged-view-free runtime files in
/// $XDG_RUNTIME_DIR/sandboxd (else /run/user/UID/sandboxd, when that is the user's own and
/// closed to others), configuration in $XDG_CONFIG_HOME/sandboxd/sandboxd.conf
/// (~/.config/...). Options given on the command line win.

#include <string>

#include "config/daemon_options.h"

namespace sandboxd {

/// Fills in what was not given; returns a sentence naming what is missing (no home, no
/// XDG_RUNTIME_DIR), or "" when all is set.
std::string ApplyUserModeDefaults(DaemonOptions& options, bool state_given, bool run_given, bool config_given);

}  // namespace sandboxd
