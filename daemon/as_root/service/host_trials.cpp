#include "service/host_trials.h"

#include <fcntl.h>

#include <spdlog/spdlog.h>

#include "base/credentials.h"
#include "base/fs_util.h"
#include "base/overlay.h"
#include "base/process.h"
#include "helper_clients/helper_client.h"
#include "sandbox/quota_layer.h"
#include "service/host_check.h"

namespace sandboxd {
namespace {

void TryUserModeJobs(const Layout& layout, const DaemonOptions& options) {
  // A trial job as a user-mode job runs: an overlay mounted in a user namespace of its own,
  // then bwrap inside it. What fails says what this machine lacks (unprivileged user
  // namespaces, overlayfs in them).
  std::string probe = layout.state_dir() + "/probe";
  std::string error;
  try {
    for (const auto& dir : {probe, probe + "/lower", probe + "/upper", probe + "/work"}) MakeDirectory(dir, 0700);
    SpawnOptions trial;
    trial.path = BesideHelper(options.helper_path, "sandboxd-user-overlay");
    trial.argv = {trial.path, "--overlay", probe + "/lower", probe + "/upper", probe + "/work", "--", options.bwrap_path,
                  "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net",
                  "--die-with-parent", "--new-session", "--", "/bin/true"};
    trial.die_with_parent = true;
    RunResult result = RunAndCapture(trial, "");
    if (result.status != 0) error = result.err.empty() ? "exit status " + std::to_string(ExitStatusFromWaitStatus(result.status)) : result.err;
  } catch (const std::exception& e) {
    error = e.what();
  }
  RemoveTree(probe);
  while (!error.empty() && error.back() == '\n') error.pop_back();
  if (error.empty())
    spdlog::info("user mode: overlayfs in a user namespace and jobs work here");
  else
    spdlog::error("user mode cannot run jobs here: {} (it needs unprivileged user namespaces and overlayfs in them, Linux 5.11 or later)", error);
}

}  // namespace

void TryOverlayAndJobs(const Layout& layout, const DaemonOptions& options) {
  if (options.user_mode) return TryUserModeJobs(layout, options);
  HostFacts facts = ReadHostFacts();
  // A trial overlay, made as a sandbox's would be: upper and work in the state directory.
  std::string probe = layout.state_dir() + "/probe", merged = layout.run_dir() + "/probe";
  try {
    for (const auto& dir : {probe, probe + "/lower", probe + "/upper", probe + "/work", merged}) MakeDirectory(dir, 0700);
    UniqueFd lower = OpenDirectoryNoSymlinks(probe + "/lower", O_PATH);
    MountOverlay({lower.get(), probe + "/upper", probe + "/work", merged});
    UnmountOverlay(merged);
  } catch (const std::exception& e) {
    facts.overlay_error = e.what();
  }
  RemoveTree(probe);
  rmdir(merged.c_str());
  // A trial job, as nobody, with a job's namespaces.
  try {
    SpawnOptions trial;
    trial.path = options.bwrap_path;
    trial.argv = {options.bwrap_path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                  "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent", "--new-session", "--", "/bin/true"};
    trial.user = LookupUser(65534);
    trial.die_with_parent = true;
    // Started as jobs are: from a namespace without the sandboxes' overlays, which recovery
    // has mounted by now (its copy of them would hold their layers while it runs).
    trial.pruned_mounts = MountPruning{layout.run_dir(), {}};
    RunResult result = RunAndCapture(trial, "");
    if (result.status != 0) {
      facts.bwrap_error = result.err.empty() ? "exit status " + std::to_string(ExitStatusFromWaitStatus(result.status)) : result.err;
      while (!facts.bwrap_error.empty() && facts.bwrap_error.back() == '\n') facts.bwrap_error.pop_back();
    }
  } catch (const std::exception& e) {
    facts.bwrap_error = e.what();
  }
  auto problems = DiagnoseHost(facts);
  for (const auto& problem : problems) spdlog::error("{}", problem);
  if (problems.empty())
    spdlog::info("overlayfs and jobs work here{}", facts.container.empty() ? "" : " (inside " + facts.container + ")");
}

bool QuotasCanBeHard(const Layout& layout, bool user_mode) {
  // Said once at start-up, as DESIGN asks: which way a quota is held to here.
  std::string why_not = "user mode: an unprivileged daemon cannot mount file systems";
  if (!user_mode) {
    MakeDirectory(layout.QuotaDir(), 0700);
    why_not = ProbeQuotaLayers(layout.QuotaDir());
  }
  if (why_not.empty())
    spdlog::info("quotas are hard limits: a sandbox with a quota keeps its layers in an ext4 file system of that size "
                 "(an image on a loop device), and a write past it fails with ENOSPC in the job");
  else
    spdlog::info("quotas stop the job that outgrows them (the changes are measured as it runs): no hard limits here, {}", why_not);
  return why_not.empty();
}

}  // namespace sandboxd
