// sandboxctl mcp: the Model Context Protocol on stdin and stdout for an agent host (DESIGN,
// "Agents"). stdout carries the protocol's messages only; anything else goes to stderr.

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>
#include <iostream>

#include "config.h"
#include "mcp_server.h"
#include "mcp_tools.h"
#include "verbs.h"

namespace sandboxctl {

namespace {

constexpr const char* kInstructions =
    "sandboxd gives you a copy-on-write sandbox over the user's project: call sandbox_open first, then run commands, "
    "read, write and edit files (read_file, write_file, edit_file, list_dir), see what changed (changes, diff) and "
    "follow background jobs (job_output, job_cancel). Nothing you do reaches "
    "the user's files until they review and commit it themselves; jobs have no network. Paths are relative to the "
    "sandbox's root.";

}  // namespace

int VerbMcp(Context& ctx) {
  // No one can answer a password prompt on the protocol's stdio: polkit is never asked to.
  ctx.no_ask_password = true;
  // A host that stops the server (SIGTERM after closing its input, Ctrl-C, a hang-up) stops the
  // call under way too: a run's job is cancelled rather than left running for no one. Blocked
  // here, before any thread is made, so that only the waiting thread below takes them.
  sigset_t stops;
  sigemptyset(&stops);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&stops, signal_number);  // SIGUSR2: our own, at the end
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  // A host that closed our stdout, or a file helper that ended before reading its request, is
  // an error of a write, not our death: the run under way would be left without its cancel.
  signal(SIGPIPE, SIG_IGN);
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) throw std::runtime_error("cannot tell the working directory of sandboxctl mcp");
  mcp::SandboxTools tools(ctx, cwd);
  mcp::Server server(SANDBOXD_VERSION, kInstructions, tools.Tools());
  std::thread stopper([&server, stops] {
    int signal_number = 0;
    if (sigwait(&stops, &signal_number) != 0 || signal_number == SIGUSR2) return;
    server.CancelAll(std::chrono::seconds(10));
    std::_Exit(128 + signal_number);
  });
  std::ios::sync_with_stdio(false);
  server.Serve(std::cin, std::cout);
  pthread_kill(stopper.native_handle(), SIGUSR2);
  stopper.join();
  return 0;
}

}  // namespace sandboxctl
