#pragma once
/// sandboxd's configuration file: INI as systemd writes it, read with inih from
/// /etc/sandboxd/sandboxd.conf and then its drop-ins (sandboxd.conf.d/*.conf, in lexical order).
/// It is strict: an unknown section or key, a malformed line or a bad value is an error naming
/// the file and line, never ignored, because a typo in a security setting must not quietly leave
/// secrets visible. It never writes anything.
///
/// (Named daemon_config, not config: the build's generated config.h, with the install paths,
/// would otherwise be shadowed for every daemon/*.cpp that includes "config.h".)

#include <string>
#include <string_view>
#include <vector>

#include "network/host_rules.h"

namespace sandboxd {

/// The built-in HiddenPaths: the usual stores of credentials and keys, browser and mail
/// profiles, and the sockets of agents that hand secrets out (see sandboxd.conf.example).
std::vector<std::string> DefaultHiddenPaths();

/// [Jobs]: what every job of every sandbox gets.
struct JobsConfig {
  /// Paths every job sees empty and unreadable, as written: absolute or "~/..." (the owner's
  /// home). HiddenPaths= appends to this list; an empty HiddenPaths= empties it.
  std::vector<std::string> hidden_paths = DefaultHiddenPaths();
  /// Hide the other entries of /home (and /root) from jobs.
  bool hide_other_homes = true;
};

/// [Storage]: where and how sandboxes keep their changes.
struct StorageConfig {
  /// zstd level of the archives Suspend writes (1 fastest .. 19 smallest).
  int archive_compression_level = 3;
  /// Bytes all sandboxes together may keep (usage.h) before garbage collection removes the
  /// largest suspended ones; 0: no cap.
  uint64_t cap_bytes = 0;
  /// For a sandbox created without --quota / --ttl; 0: none.
  uint64_t default_quota_bytes = 0;
  uint64_t default_ttl_sec = 0;
  /// The largest quota a user may give a sandbox without polkit's manage action; with it set, a
  /// sandbox created without --quota gets DefaultQuota, or this when that is unset (never
  /// none). 0: no maximum.
  uint64_t max_quota_bytes = 0;
  /// "MaxQuota=N%": N percent (1 to 100) of the file system that holds the state directory,
  /// turned into max_quota_bytes at start-up (ResolveMaxQuota); 0: MaxQuota is in bytes.
  unsigned max_quota_percent = 0;
};

/// [Limits]: what one user may hold of the daemon (DESIGN, "Limits"). A refusal names the key
/// and its value.
struct LimitsConfig {
  /// Sandboxes one user may have (root: any number). Each root of each is a mount.
  size_t max_sandboxes_per_user = 256;
  /// Roots one sandbox may have (at most 64).
  size_t max_roots_per_sandbox = 64;
  /// Jobs running at once in one user's sandboxes (root: any number).
  size_t max_running_jobs_per_user = 64;
  /// Calls of one user queued or running in the daemon's workers at once (worker_pool.h).
  size_t max_calls_in_flight_per_user = 64;
  /// Seconds a call writing into a caller's fd (Diff) waits for its reader to read anything
  /// before it gives up, freeing its worker and helper.
  uint64_t stalled_reader_timeout_sec = 300;
  /// Bytes of captured output (a job's stdout and stderr when its caller passed no fds) one
  /// user's kept jobs may hold together on disk (captured_output.h); 0: none is kept.
  uint64_t max_captured_output_per_user = 256ull << 20;
  /// Limits of a job that names none (run --memory-max, --tasks-max), where the controller
  /// exists (job_limits.h); a job asking for more needs polkit's manage action. 0: none.
  uint64_t default_memory_max = 0;
  uint64_t default_tasks_max = 4096;
};

/// [Network]: what a job may reach (issue 43).
struct NetworkConfig {
  /// Hosts any user may let a job reach (run/create --allow-host) without polkit's network
  /// action: rules as --allow-host takes them, appended to by each AllowedHosts=; an empty
  /// AllowedHosts= empties the list. None by default.
  std::vector<network::HostRule> allowed_hosts;
};

/// The whole configuration. A new section is a new member struct here plus its rows in the key
/// table of daemon_config.cpp.
struct Config {
  JobsConfig jobs;
  StorageConfig storage;
  LimitsConfig limits;
  NetworkConfig network;
};

/// Applies the assignments of one file's text, in order, on top of `config`; `file` names it
/// in messages. Throws Error(kInvalidArgument): "FILE:LINE: problem".
void ApplyConfigText(std::string_view text, const std::string& file, Config& config);

/// The files LoadConfig reads, in order: `main_path` when it exists, then the regular files
/// named *.conf in `main_path` + ".d/", sorted by name. Missing ones are simply not listed.
std::vector<std::string> ConfigFiles(const std::string& main_path);

/// The built-in defaults with every file of ConfigFiles(main_path) applied. The daemon's
/// main_path is SANDBOXD_DEFAULT_CONFIG (config.h: where meson installs the file) or --config.
/// Throws Error(kInvalidArgument) for a bad file, Error(kFailed) for one that cannot be read.
/// Throws Error(kInvalidArgument) when DefaultQuota= is above MaxQuota= (in bytes).
void CheckDefaultQuotaWithinMax(const StorageConfig& storage);

/// A MaxQuota= given as a percentage, in bytes of a file system of `state_file_system_bytes`
/// (whole MiB, at least 1 MiB); then CheckDefaultQuotaWithinMax. Nothing for a MaxQuota in bytes.
void ResolveMaxQuota(StorageConfig& storage, uint64_t state_file_system_bytes);

Config LoadConfig(const std::string& main_path);

}  // namespace sandboxd
