#pragma once
/// At start-up, sandboxd tries what it will do for its callers, as they would have it done: a
/// trial overlay where sandboxes' layers go, a trial job as nobody with a job's namespaces (in
/// user mode: through sandboxd-user-overlay), a trial quota layer. What fails is said in the
/// log with what the machine lacks (host_check.h); the daemon serves calls either way.

#include "config/daemon_options.h"
#include "sandbox/layout.h"

namespace sandboxd {

/// Logs whether overlays and jobs work here, and if not why.
void TryOverlayAndJobs(const Layout& layout, const DaemonOptions& options);

/// Whether quotas can be hard limits here (quota_layer.h: an ext4 image per sandbox), said
/// once in the log either way, as DESIGN asks.
bool QuotasCanBeHard(const Layout& layout, bool user_mode);

}  // namespace sandboxd
