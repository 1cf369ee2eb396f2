// `sandboxctl run`: start a job with our own stdin/stdout/stderr, wait for it, exit with its
// status. Ctrl-C (and SIGTERM, SIGHUP) cancel the job rather than leave it running unseen.
// `try` runs its command through the same pieces.

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "proxies.h"
#include "quote_path.h"
#include "units.h"
#include "refusal_note.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

bool Inside(const std::string& path, const std::string& root) {
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/');
}

}  // namespace

std::string CwdInsideRoots(const std::vector<std::string>& roots) {
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) return "";
  for (const auto& root : roots)
    if (Inside(cwd, root)) return cwd;
  return "";
}

std::map<std::string, std::string> JobEnvironment(const std::vector<std::string>& assignments) {
  std::map<std::string, std::string> env;
  for (const char* name : {"TERM", "COLORTERM", "NO_COLOR"})
    if (const char* value = getenv(name)) env[name] = value;
  for (const auto& entry : assignments) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError{"--env takes NAME=VALUE, not '" + entry + "'"};
    env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

uint64_t ParseDuration(const std::string& text, const std::string& option) {
  if (auto seconds = sandboxd::units::ParseDuration(text)) return *seconds;
  throw UsageError{option + " takes seconds or a number with s, m, h or d (e.g. 90, 5m, 2h, 7d), not '" + text + "'"};
}

uint64_t ParseSize(const std::string& text, const std::string& option) {
  if (auto bytes = sandboxd::units::ParseSize(text)) return *bytes;
  throw UsageError{option + " takes a size in bytes or with K, M, G or T (e.g. 512M, 2G), not '" + text + "'"};
}

std::map<std::string, sdbus::Variant> JobRunOptions(const RunArgs& args) {
  std::map<std::string, sdbus::Variant> options;
  if (!args.timeout.empty()) {
    uint64_t seconds = ParseDuration(args.timeout, "--timeout");
    if (seconds == 0) throw UsageError{"--timeout must be more than 0 s"};
    options["timeout_sec"] = sdbus::Variant(seconds);
  }
  if (args.network && !args.allow_hosts.empty())
    throw UsageError{"--network and --allow-host exclude each other: the one is every host, the other those named"};
  if (args.network) options["network"] = sdbus::Variant(true);
  if (!args.allow_hosts.empty()) options["allow_hosts"] = sdbus::Variant(args.allow_hosts);
  if (args.no_live_feed) options["live_feed"] = sdbus::Variant(false);
  if (!args.memory_max.empty()) options["memory_max"] = sdbus::Variant(ParseSize(args.memory_max, "--memory-max"));
  if (!args.tasks_max.empty()) {
    const std::string& text = args.tasks_max;
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
      throw UsageError{"--tasks-max takes a number of processes, not '" + text + "'"};
    options["tasks_max"] = sdbus::Variant(static_cast<uint64_t>(std::stoull(text)));
  }
  if (!args.hide.empty()) {
    std::vector<std::string> hide;
    for (const auto& path : args.hide) hide.push_back(Absolute(path));
    options["hide"] = sdbus::Variant(hide);
  }
  if (!args.allow_sockets.empty()) {
    std::vector<std::string> sockets;
    for (const auto& path : args.allow_sockets) sockets.push_back(Absolute(path));
    options["allow_sockets"] = sdbus::Variant(sockets);
  }
  return options;
}

JobEnd RunWithOurStreams(Context& ctx, const std::string& sandbox_path, const std::vector<std::string>& command,
                         const std::string& cwd, const std::map<std::string, std::string>& env,
                         const std::map<std::string, sdbus::Variant>& options,
                         const std::function<std::string()>& resolve_again) {
  auto run = [&](const std::string& path) {
    std::map<std::string, sdbus::UnixFd> fds = {
        {"stdin", sdbus::UnixFd(STDIN_FILENO)}, {"stdout", sdbus::UnixFd(STDOUT_FILENO)}, {"stderr", sdbus::UnixFd(STDERR_FILENO)}};
    return SandboxProxy(ctx.Bus(), path).Run(command, cwd, env, fds, options, ctx.InteractiveFlag());
  };

  // Signals are taken by a thread that cancels the job; the main thread waits for its end.
  sigset_t stop, before;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  sigaddset(&stop, SIGUSR2);  // our own wake-up once the job has ended
  pthread_sigmask(SIG_BLOCK, &stop, &before);

  sdbus::ObjectPath job_path;
  try {
    job_path = run(sandbox_path);
  } catch (const sdbus::Error& e) {
    if (!resolve_again || e.getName() != "org.freedesktop.DBus.Error.UnknownObject")
      throw;
    job_path = run(resolve_again());  // GetSandbox's answer: the named sandbox, or NotFound
  }
  JobProxy job(ctx.Bus(), job_path);

  std::atomic<int> stopped_by{0};  // the signal that cancelled the job
  std::thread canceller([stop, job_path, &ctx, &stopped_by] {
    int signal_number = 0;
    if (sigwait(&stop, &signal_number) != 0 || signal_number == SIGUSR2) return;
    stopped_by = signal_number;
    try {
      auto bus = ctx.OpenBus();
      JobProxy(*bus, job_path).Cancel();
    } catch (const sdbus::Error&) {
    }
  });
  JobEnd end;
  job.raw()
      .callMethod("Wait")
      .onInterface(sandboxd::api::kJobInterface)
      .withTimeout(std::chrono::hours(24 * 365))
      .storeResultsTo(end.exit_status, end.reason);
  // Wake the canceller so that it ends.
  pthread_kill(canceller.native_handle(), SIGUSR2);
  canceller.join();
  // A caller that goes on after the job (try) must be interruptible again.
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  // As a shell tells it: a job stopped by Ctrl-C ends with 130 (128 + SIGINT), and so on.
  if (int signal_number = stopped_by.load(); signal_number != 0) {
    end.exit_status = 128 + signal_number;
    return end;
  }
  // What the job's forwarder refused (a job allowed some hosts), once, after its own output;
  // and for a job that could not be set up, what could not be.
  std::string failure;
  try {
    auto status = job.GetStatus();
    if (status.count("failure")) failure = status["failure"].get<std::string>();
    std::vector<RefusedConnection> refused;
    if (status.count("refused"))
      for (const auto& entry : status["refused"].get<std::vector<sdbus::Struct<std::string, uint16_t, std::string>>>())
        refused.push_back({entry.get<0>(), entry.get<1>(), entry.get<2>()});
    uint32_t count = status.count("refused_count") ? status["refused_count"].get<uint32_t>() : 0;
    if (std::string note = RefusalNote(refused, count); !note.empty()) std::cerr << note << "\n";
    if (status.count("no_route_count") && end.exit_status != 0)
      if (std::string note = NoNetworkNote(status["no_route_count"].get<uint64_t>()); !note.empty()) std::cerr << note << "\n";
  } catch (const sdbus::Error&) {
    // The job is gone from the daemon's list already: its end is what counts.
  }
  if (end.reason == "failed")
    std::cerr << "sandboxctl: the sandbox for the job could not be set up" << (failure.empty() ? "" : ": " + sandboxd::api::EscapeControlBytes(failure))
              << " (status " << end.exit_status << ")\n";
  if (end.reason == "timeout") std::cerr << "sandboxctl: the job ran out of time and was killed\n";
  if (end.reason == "memory") std::cerr << "sandboxctl: the job went over its memory limit (--memory-max) and the kernel killed it\n";
  if (end.reason == "quota")
    std::cerr << "sandboxctl: QuotaExceeded: the sandbox's changes grew over its quota (create --quota) and the job was stopped; "
                 "what it wrote is kept: commit or discard changes to go on (sandboxctl usage shows the size)\n";
  return end;
}

int VerbRun(Context& ctx, const RunArgs& args) {
  // Bad usage is told before anything is asked of sandboxd.
  auto options = JobRunOptions(args);
  std::string cwd = args.cwd.empty() ? "" : Absolute(args.cwd);
  if (cwd.empty()) {
    // Our own directory where it is inside a root, else the first root: sandboxd knows the
    // roots, so asking for them first would only cost a round trip.
    char here[PATH_MAX];
    if (getcwd(here, sizeof here)) cwd = here;
    options["cwd_fallback"] = sdbus::Variant(true);
  }
  if (args.detach) {
    // No streams of ours: a job tied to them would end with this process (its caller's
    // connection); sandboxd keeps its output instead, for logs, and its stdin is /dev/null.
    auto start = [&](const std::string& path) {
      return SandboxProxy(ctx.Bus(), path).Run(args.command, cwd, JobEnvironment(args.env), std::map<std::string, sdbus::UnixFd>{}, options,
                                               ctx.InteractiveFlag());
    };
    sdbus::ObjectPath job;
    try {
      job = start(ctx.ResolveSandboxFast(args.sandbox));
    } catch (const sdbus::Error& e) {
      if (e.getName() != "org.freedesktop.DBus.Error.UnknownObject") throw;
      job = start(ctx.ResolveSandbox(args.sandbox));
    }
    std::cout << job.substr(job.rfind('/') + 1) << std::endl;
    return 0;
  }
  return RunWithOurStreams(ctx, ctx.ResolveSandboxFast(args.sandbox), args.command, cwd, JobEnvironment(args.env), options,
                           [&] { return ctx.ResolveSandbox(args.sandbox); })
      .exit_status;
}

}  // namespace sandboxctl
