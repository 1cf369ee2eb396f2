#pragma once
/// The daemon's command line (main.cpp; user_mode.h fills it for --user): where it keeps state,
/// where its helpers and bwrap are, and how it runs.

#include <string>

namespace sandboxd {

struct DaemonOptions {
  std::string state_dir;
  std::string run_dir;
  std::string helper_path;
  std::string bwrap_path;
  std::string config_path;         ///< sandboxd.conf (its .d/ drop-ins beside it)
  unsigned idle_exit_seconds = 0;  ///< 0: never
  std::string storage_cap;         ///< --storage-cap SIZE: [Storage] Cap= over the configuration's
  /// --user: on the session bus as the user, no polkit, overlays mounted in each job's own
  /// namespaces (user_overlay_main.cpp) rather than on the host.
  bool user_mode = false;
};

}  // namespace sandboxd
