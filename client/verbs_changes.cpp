// Verbs about the change set: changes, diff, commit.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "diff_output.h"
#include "polkit_agent.h"
#include "proxies.h"
#include "verbs.h"

namespace sandboxctl {

int VerbChanges(Context& ctx, const std::string& id_or_name) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>> changes;
  sandbox.raw()
      .callMethod("GetChanges")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(10))
      .storeResultsTo(changes);
  if (ctx.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& change : changes) {
      const auto& details = change.get<3>();
      nlohmann::json entry = {{"path", change.get<1>()}, {"kind", change.get<2>()}, {"root", change.get<0>()}};
      for (const auto& [key, value] : details) {
        if (value.peekValueType() == "s") entry[key] = value.get<std::string>();
        else if (value.peekValueType() == "u") entry[key] = value.get<uint32_t>();
      }
      out.push_back(std::move(entry));
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  static const std::map<std::string, char> kLetters = {
      {"added", 'A'}, {"modified", 'M'}, {"deleted", 'D'}, {"type-changed", 'T'}, {"mode-changed", 'P'}};
  for (const auto& change : changes) {
    auto letter = kLetters.find(change.get<2>());
    std::cout << (letter == kLetters.end() ? '?' : letter->second) << ' ' << change.get<1>() << "\n";
  }
  return 0;
}

int VerbDiff(Context& ctx, const std::string& id_or_name, const std::vector<std::string>& selectors) {
  std::string path = ctx.ResolveSandbox(id_or_name);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw sdbus::Error("org.freedesktop.DBus.Error.Failed", "cannot create a pipe");
  int read_end = pipe_fds[0];
  // The daemon writes into the pipe while we read it, so the call runs on its own thread (and
  // its own connection): reading and waiting for the reply must not block each other.
  sdbus::UnixFd write_end(pipe_fds[1], sdbus::adopt_fd);
  std::unique_ptr<sdbus::Error> failure;
  std::thread caller([&, write_end = std::move(write_end)]() mutable {
    try {
      auto bus = sdbus::createSystemBusConnection();
      SandboxProxy sandbox(*bus, path);
      auto call = sandbox.raw().createMethodCall(sandboxd::api::kSandboxInterface, "Diff");
      call << selectors << write_end;
      write_end.reset();
      sandbox.raw().callMethod(call, 600'000'000);
    } catch (const sdbus::Error& e) {
      failure = std::make_unique<sdbus::Error>(e);
    }
  });
  DiffOutput output;
  char buffer[65536];
  for (;;) {
    ssize_t got = read(read_end, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    output.Write(buffer, static_cast<size_t>(got));
  }
  close(read_end);
  caller.join();
  output.Finish();
  if (failure) throw *failure;
  return 0;
}

int VerbCommit(Context& ctx, const std::string& id_or_name, bool all) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  uint64_t flags = ctx.InteractiveFlag() | (all ? sandboxd::api::kFlagCommitAll : 0);
  PolkitAgent agent;
  uint32_t committed = 0;
  sandbox.raw()
      .callMethod("Commit")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(30))  // a password prompt, then possibly many files
      .withArguments(flags)
      .storeResultsTo(committed);
  if (!all && committed == 0)
    std::cerr << "Nothing approved to commit; use --all to commit every change.\n";
  else
    std::cerr << "Committed " << committed << (committed == 1 ? " change.\n" : " changes.\n");
  return 0;
}

}  // namespace sandboxctl
