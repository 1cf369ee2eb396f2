#pragma once
/// The implementation of each sandboxctl verb. Each returns the process exit status; D-Bus
/// errors propagate as sdbus::Error and are printed by main.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "context.h"
#include "path_patterns.h"

namespace sandboxctl {

struct CreateArgs {
  std::string name;
  bool network = false;
  bool shared = false;
  std::string quota;  ///< --quota SIZE; "" none
  std::string ttl;    ///< --ttl DUR; "" none
  std::vector<std::string> hide;  ///< --hide (relative ones are taken from our cwd)
  std::vector<std::string> allow_sockets;  ///< --allow-socket (relative ones are taken from our cwd)
  std::vector<std::string> allow_hosts;    ///< --allow-host HOST[:PORT][,...] (repeatable)
  std::vector<std::string> dirs;
  bool scratch_home = false;  ///< --scratch-home
  bool made_by_try = false;  ///< (not an option: try sets it for the sandboxes it makes)
};
struct RunArgs {
  std::string sandbox;
  std::string cwd;
  std::vector<std::string> env;
  std::string timeout;             ///< --timeout: seconds, or with a unit (90s, 5m, 2h); "" none
  bool network = false;            ///< --network
  bool no_live_feed = false;       ///< --no-live-feed
  std::vector<std::string> hide;   ///< --hide (relative ones are taken from our cwd)
  std::vector<std::string> allow_sockets;  ///< --allow-socket (relative ones are taken from our cwd)
  std::vector<std::string> allow_hosts;    ///< --allow-host HOST[:PORT][,...] (repeatable)
  std::string memory_max;          ///< --memory-max SIZE (10M, 2G); "" none
  std::string tasks_max;           ///< --tasks-max N; "" none
  bool detach = false;             ///< run -d: print the job's id and return; its output is kept
  std::vector<std::string> command;
};
struct ShellArgs {
  std::string sandbox;
  std::vector<std::string> command;  ///< empty: the owner's login shell
};
struct TryArgs {
  std::vector<std::string> roots;  ///< empty: the current directory
  bool commit = false;             ///< -y
  bool keep = false;               ///< -n
  /// run's options for the command; its `sandbox` is --sandbox NAME (a sandbox of the caller's
  /// to run in instead of a new one, which try never discards nor destroys).
  RunArgs run;
  std::vector<std::string> command;
};

int VerbCreate(Context& ctx, const CreateArgs& args);
int VerbList(Context& ctx);
int VerbShow(Context& ctx, const std::string& sandbox);
int VerbRun(Context& ctx, const RunArgs& args);
/// shell SANDBOX [-- CMD...]: on a pseudo-terminal of its own, relayed to ours (verb_shell.cpp).
int VerbShell(Context& ctx, const ShellArgs& args);
/// `patterns` (--include / --exclude) narrow every verb that takes them to the changes whose
/// paths pass (change_filter.h).
int VerbChanges(Context& ctx, const std::string& sandbox, const PathPatterns& patterns = {});
/// What diff prints: the patch, or per file its lines added and removed (--stat), or its name
/// alone (--name-only).
enum class DiffForm { kPatch, kStat, kNameOnly };
/// `binary` (--binary): binary changes as git's binary patches.
int VerbDiff(Context& ctx, const std::string& sandbox, const std::vector<std::string>& selectors,
             const PathPatterns& patterns = {}, DiffForm form = DiffForm::kPatch, bool binary = false);
/// Commits the approved changes (those `selectors` name, when given).
int VerbCommit(Context& ctx, const std::string& sandbox, bool all, bool force = false,
               const std::vector<std::string>& selectors = {}, const PathPatterns& patterns = {});
/// approve (approve = true) or reject SANDBOX (SELECTOR... | --all), with `note` kept with
/// the decision when given.
int VerbDecide(Context& ctx, const std::string& sandbox, const std::vector<std::string>& selectors, bool all, bool approve,
               const PathPatterns& patterns = {}, const std::optional<std::string>& note = std::nullopt);
/// watch SANDBOX: the live change feed, a line per path and kind (--json: an object per line).
int VerbWatch(Context& ctx, const std::string& sandbox);
/// log SANDBOX [-v]: the sandbox's commits, numbered from 1 within it (-v: their paths).
int VerbLog(Context& ctx, const std::string& sandbox, bool verbose);
int VerbUndo(Context& ctx, const std::string& sandbox);
/// discard and destroy refuse a sandbox whose jobs still run, naming them, unless
/// `cancel_jobs` (--cancel-jobs) has them cancelled first.
int VerbDiscard(Context& ctx, const std::string& sandbox, bool cancel_jobs = false);
/// suspend prints the size of the archives; resume prints nothing.
int VerbSuspend(Context& ctx, const std::string& sandbox);
int VerbResume(Context& ctx, const std::string& sandbox);
int VerbDestroy(Context& ctx, const std::string& sandbox, bool cancel_jobs = false);
/// jobs [SANDBOX], logs JOB [-f], cancel JOB (verbs_jobs.cpp).
int VerbJobs(Context& ctx, const std::string& sandbox);
/// A job's object from its id (what `jobs` prints); UsageError for what is no job id.
std::string JobPathOf(const std::string& id);
/// Rethrows `error`, a call's on job `id`, saying "no job ID is known" for a path with no job.
[[noreturn]] void ThrowAboutJob(const sdbus::Error& error, const std::string& id);
/// mcp: a Model Context Protocol server on stdin and stdout until stdin ends (verb_mcp.cpp).
int VerbMcp(Context& ctx);
int VerbLogs(Context& ctx, const std::string& job_id, bool follow);
int VerbCancel(Context& ctx, const std::string& job_id);
/// Refuses (one line naming each running job of the sandbox at `sandbox_path`) unless
/// `cancel_jobs`, which cancels them and waits for their ends; `verb` names the act.
void EndRunningJobs(Context& ctx, const std::string& sandbox_path, const std::string& id_or_name, const std::string& verb,
                    bool cancel_jobs);
/// usage [--all]: storage per sandbox and in total (verb_usage.cpp).
int VerbUsage(Context& ctx, bool everyone);
/// gc: what garbage collection removed now, and why (verb_usage.cpp).
int VerbGc(Context& ctx);
int VerbTry(Context& ctx, const TryArgs& args);
/// review SANDBOX: interactive, hunk by hunk, in the manner of `git add -p` (verb_review.cpp).
int VerbReview(Context& ctx, const std::string& sandbox);

// The part of `review` that `try` shares (verb_review.cpp).

/// How a review ended: its units (hunks of text modifications, other changes whole) by
/// verdict once it was over, and the signal that interrupted it (0 when none did).
struct ReviewOutcome {
  size_t approved = 0;
  size_t rejected = 0;
  size_t pending = 0;
  int signal = 0;
};
/// Asks about each change of SANDBOX on the terminal and sends each decision as it is made,
/// then prints how many units are approved, rejected and pending. Speaks on stdout, or on
/// stderr with `on_stderr` (for `try`, whose stdout belongs to the command). Needs a terminal
/// on stdin (a UsageError otherwise).
ReviewOutcome ReviewOnTerminal(Context& ctx, const std::string& sandbox, bool on_stderr);

// The parts of `run` that `try` shares (verb_run.cpp).

/// How a job ended: its exit status (128+N for signal N) and why (exited, signal, failed, cancelled).
struct JobEnd {
  int32_t exit_status = 0;
  std::string reason;
};
/// `path` made absolute against the current directory (UsageError if that cannot be told).
std::string Absolute(const std::string& path);
/// The caller's cwd when it lies inside one of `roots` (canonical paths), else "" (the first root).
std::string CwdInsideRoots(const std::vector<std::string>& roots);
/// The job's added environment: the terminal's variables, then each NAME=VALUE of `assignments`.
std::map<std::string, std::string> JobEnvironment(const std::vector<std::string>& assignments);
/// Runs `command` in the sandbox at `sandbox_path` with our own stdin/stdout/stderr and waits for
/// it; SIGINT, SIGTERM and SIGHUP meanwhile cancel the job instead of ending us.
/// `options` are Sandbox.Run's (JobRunOptions).
/// `resolve_again`, when given, names the sandbox the slow way should `sandbox_path` (from
/// Context::ResolveSandboxFast) turn out not to be the caller's sandbox.
JobEnd RunWithOurStreams(Context& ctx, const std::string& sandbox_path, const std::vector<std::string>& command,
                         const std::string& cwd, const std::map<std::string, std::string>& env,
                         const std::map<std::string, sdbus::Variant>& options = {},
                         const std::function<std::string()>& resolve_again = {});
/// Sandbox.Run's options from run's --timeout, --network and --hide (UsageError when malformed).
std::map<std::string, sdbus::Variant> JobRunOptions(const RunArgs& args);
/// Seconds in "90", "90s", "5m" or "2h" (UsageError naming `text` otherwise).
/// DUR: seconds, or a number with s, m, h or d. Throws UsageError naming `option`.
uint64_t ParseDuration(const std::string& text, const std::string& option);
/// SIZE: a number with an optional binary unit (K, M, G, T; "10M", "2G"); bytes. Throws
/// UsageError naming `option` on anything else.
uint64_t ParseSize(const std::string& text, const std::string& option);

}  // namespace sandboxctl
