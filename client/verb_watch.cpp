// `sandboxctl watch SANDBOX`: the live change feed (the ChangesSeen signal) on the command line,
// a line per path and kind as the sandbox's jobs write, until Ctrl-C or the sandbox is gone.
// Signals about a sandbox go to its owner's connections only, so this is the owner's view.

#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "api.h"
#include "listed_change.h"
#include "quote_path.h"
#include "utf8.h"
#include "verbs.h"

namespace sandboxctl {

int VerbWatch(Context& ctx, const std::string& id_or_name) {
  const std::string path = ctx.ResolveSandbox(id_or_name);
  // Taken by the thread below alone, blocked before any other thread is made.
  sigset_t stops;
  sigemptyset(&stops);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&stops, signal_number);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);

  auto bus = ctx.OpenBus();
  std::mutex out_mutex;
  auto say = [&](const std::string& line) {
    std::lock_guard lock(out_mutex);
    std::cout << line << '\n' << std::flush;
  };
  auto sandbox = sdbus::createProxy(*bus, sandboxd::api::kBusName, path);
  sandbox->uponSignal("ChangesSeen")
      .onInterface(sandboxd::api::kSandboxInterface)
      .call([&](const std::vector<sdbus::Struct<uint32_t, std::string, std::string>>& changes, uint32_t more, bool lost) {
        for (const auto& change : changes) {
          const std::string& kind = change.get<2>();
          if (ctx.json) {
            say(nlohmann::json{{"root", change.get<0>()}, {"path", change.get<1>()}, {"kind", kind}}.dump());
          } else {
            // A path back as it is live shows '-'; names as git prints them: no byte steers the terminal.
            say(std::string(1, kind == "unchanged" ? '-' : ChangeLetter(kind)) + " " + sandboxd::api::ShowWireName(change.get<1>()));
          }
        }
        if (more > 0) say(ctx.json ? nlohmann::json{{"more", more}}.dump() : "! " + std::to_string(more) + " more paths changed meanwhile");
        if (lost)
          say(ctx.json ? nlohmann::json{{"lost", true}}.dump()
                       : "! some changes went unseen; sandboxctl changes " + sandboxd::api::EscapeControlBytes(id_or_name) + " has the whole account");
      });
  sandbox->uponSignal("ChangeSetChanged").onInterface(sandboxd::api::kSandboxInterface).call([&](uint32_t count) {
    say(ctx.json ? nlohmann::json{{"changes", count}}.dump() : "= " + std::to_string(count) + (count == 1 ? " change" : " changes") + " in all");
  });
  sandbox->finishRegistration();
  auto manager = sdbus::createProxy(*bus, sandboxd::api::kBusName, sandboxd::api::kManagerPath);
  bool gone = false;
  manager->uponSignal("SandboxRemoved")
      .onInterface(sandboxd::api::kManagerInterface)
      .call([&](const sdbus::ObjectPath& removed, const std::string&) {
        if (removed != path) return;
        gone = true;
        bus->leaveEventLoop();
      });
  manager->finishRegistration();

  std::thread stopper([&bus, stops] {
    int signal_number = 0;
    sigwait(&stops, &signal_number);
    bus->leaveEventLoop();
  });
  if (!ctx.json) std::cerr << "Watching sandbox " << sandboxd::api::EscapeControlBytes(id_or_name) << " (Ctrl-C ends).\n";
  bus->enterEventLoop();
  pthread_kill(stopper.native_handle(), SIGUSR2);
  stopper.join();
  if (gone) std::cerr << "Sandbox " << sandboxd::api::EscapeControlBytes(id_or_name) << " is gone.\n";
  return 0;
}

}  // namespace sandboxctl
