// sandboxctl mcp: the Model Context Protocol on stdin and stdout for an agent host (DESIGN,
// "Agents"). stdout carries the protocol's messages only; anything else goes to stderr.

#include <unistd.h>

#include <climits>
#include <iostream>

#include "config.h"
#include "mcp_server.h"
#include "mcp_tools.h"
#include "verbs.h"

namespace sandboxctl {

namespace {

constexpr const char* kInstructions =
    "sandboxd gives you a copy-on-write sandbox over the user's project: call sandbox_open first, then run commands, "
    "read what they changed (changes, diff) and follow background jobs (job_output, job_cancel). Nothing you do reaches "
    "the user's files until they review and commit it themselves; jobs have no network. Paths are relative to the "
    "sandbox's root.";

}  // namespace

int VerbMcp(Context& ctx) {
  // No one can answer a password prompt on the protocol's stdio: polkit is never asked to.
  ctx.no_ask_password = true;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) throw std::runtime_error("cannot tell the working directory of sandboxctl mcp");
  mcp::SandboxTools tools(ctx, cwd);
  mcp::Server server(SANDBOXD_VERSION, kInstructions, tools.Tools());
  std::ios::sync_with_stdio(false);
  server.Serve(std::cin, std::cout);
  return 0;
}

}  // namespace sandboxctl
