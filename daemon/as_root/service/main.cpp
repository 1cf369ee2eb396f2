// sandboxd: the privileged daemon. Start-up order as machined's: options → logging → signals →
// state → bus → objects → name → READY=1 → loop (Service::Run does the part after signals).

#include <malloc.h>
#include <signal.h>
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <spdlog/spdlog.h>
#include <mutex>
#include <thread>

#include "base/errors.h"
#include "base/private_mounts.h"
#include "config.h"
#include "logging/log.h"
#include "service/service.h"
#include "service/user_mode.h"

int main(int argc, char** argv) {
  CLI::App app{"sandboxd — copy-on-write sandboxes for reviewable commands", "sandboxd"};
  sandboxd::DaemonOptions options;
  options.state_dir = SANDBOXD_DEFAULT_STATE_DIR;
  options.run_dir = SANDBOXD_DEFAULT_RUN_DIR;
  options.bwrap_path = BWRAP_PATH;
  options.helper_path = SANDBOXD_HELPER_PATH;
  options.config_path = SANDBOXD_DEFAULT_CONFIG;  // where meson installs it
  bool user_mode = false;
  std::string log_level = "info";
  app.add_flag("--user", user_mode,
               "Run on the session bus as the calling user, without root or polkit (state in $XDG_STATE_HOME/sandboxd, "
               "runtime files in $XDG_RUNTIME_DIR/sandboxd)");
  app.add_option("--state-dir", options.state_dir, "Directory for the database and upper layers")->capture_default_str();
  app.add_option("--run-dir", options.run_dir, "Directory for the merged mounts")->capture_default_str();
  app.add_option("--config", options.config_path, "Configuration file (drop-ins in FILE.d/*.conf)")->capture_default_str();
  app.add_option("--idle-exit", options.idle_exit_seconds, "Exit after this many idle seconds (0: never)");
  app.add_option("--storage-cap", options.storage_cap,
                 "Bytes all sandboxes together may keep before garbage collection removes suspended ones (e.g. 50G; "
                 "overrides [Storage] Cap=)");
  app.add_option("--log-level", log_level, "trace, debug, info, warning or error")->capture_default_str();
  app.set_version_flag("--version", SANDBOXD_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; bad usage is 2, as sandboxctl's, whatever code
    // the parser gives the kind of mistake.
    return app.exit(e) == 0 ? 0 : 2;
  }

  // Test and development builds point at their own helper; an installed daemon uses its libexec one.
  if (const char* helper = std::getenv("SANDBOXD_HELPER")) options.helper_path = helper;

  try {
    sandboxd::SetUpLogging(log_level);
  } catch (const std::exception& e) {
    fprintf(stderr, "sandboxd: %s\n", e.what());
    return 2;
  }
  if (user_mode) {
    if (geteuid() == 0) {
      spdlog::error("sandboxd --user runs as the user whose sandboxes it keeps, not as root");
      return 2;
    }
    std::string problem = sandboxd::ApplyUserModeDefaults(options, app.count("--state-dir") > 0, app.count("--run-dir") > 0,
                                                          app.count("--config") > 0);
    if (!problem.empty()) {
      spdlog::error("{}", problem);
      return 2;
    }
  } else if (geteuid() != 0) {
    spdlog::error("sandboxd must run as root (it mounts overlays); use --user for session mode");
    return 1;
  }

  if (!user_mode) {
    // The overlays are mounted in a mount namespace of the daemon's own, which nothing outside
    // copies (base/private_mounts.h): a copy of one in any other namespace (a user's job,
    // root's `unshare -m`) would keep its layers busy and its sandbox's commits failing. Made
    // here, while this is the only thread; what an earlier sandboxd left mounted in the host's
    // namespace goes first, or its copies there would be the ones holding the layers.
    try {
      sandboxd::DetachMountsBelow(options.run_dir);
      if (!sandboxd::EnterOwnMountNamespace())
        spdlog::warn("the host's mounts do not propagate (/ is not a shared mount): a root on a file system mounted after "
                     "sandboxd started is refused until sandboxd is started again");
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
      return 1;
    }
  }

  // Memory a large operation freed goes back to the system (issue 19). Left to itself, glibc
  // raises its trim and mmap thresholds with the largest block ever freed (up to 64 MiB), and
  // never trims the top of a thread's arena below that, nor does malloc_trim: ~70 MiB stayed
  // held after a commit of 100,000 files. Fixed thresholds keep the dynamic raise off.
  mallopt(M_MMAP_THRESHOLD, 512 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);

  // Every thread inherits this mask; one thread waits for the signals and stops the loop.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client closing its diff pipe must not kill the daemon

  sandboxd::Service service(options);
  // The signal thread outlives Run() (a signal may come as the daemon ends on its own, after
  // an idle exit or a lost bus): it may reach the service only while the service lives.
  static std::mutex service_mutex;
  static sandboxd::Service* live_service = &service;
  std::thread signal_thread([] {
    int received = 0;
    sigset_t signals;
    sigemptyset(&signals);
    for (int signal_number : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, signal_number);
    sigwait(&signals, &received);
    spdlog::info("received signal {}", received);
    std::lock_guard lock(service_mutex);
    if (live_service != nullptr) live_service->Stop();
  });
  signal_thread.detach();
  int status = 1;
  try {
    status = service.Run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
  }
  std::lock_guard lock(service_mutex);
  live_service = nullptr;
  return status;
}
