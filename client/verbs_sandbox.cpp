// Verbs about sandboxes as a whole: create, list, show, discard, destroy.

#include <limits.h>
#include <unistd.h>

#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "polkit_agent.h"
#include "progress_follower.h"
#include "quote_path.h"
#include "proxies.h"
#include "text_lines.h"
#include "verbs.h"

namespace sandboxctl {

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (!getcwd(cwd, sizeof cwd)) throw UsageError{"cannot tell the current directory to resolve '" + path + "'"};
  std::string base(cwd);
  return path.empty() || path == "." ? base : base + "/" + path;
}

namespace {

std::string JoinRoots(const std::vector<std::string>& roots) {
  std::string text;
  for (const auto& root : roots) text += (text.empty() ? "" : ",") + root;
  return text;
}

std::string FormatTime(uint64_t usec) {
  time_t seconds = static_cast<time_t>(usec / 1000000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

}  // namespace

int VerbCreate(Context& ctx, const CreateArgs& args) {
  std::vector<std::string> roots;
  for (const auto& dir : args.dirs) roots.push_back(Absolute(dir));
  std::map<std::string, sdbus::Variant> options;
  if (!args.name.empty()) options["name"] = sdbus::Variant(args.name);
  if (args.network && !args.allow_hosts.empty())
    throw UsageError{"--network and --allow-host exclude each other: the one is every host, the other those named"};
  if (args.network) options["network"] = sdbus::Variant(true);
  if (!args.allow_hosts.empty()) options["allow_hosts"] = sdbus::Variant(args.allow_hosts);
  if (args.shared) options["shared"] = sdbus::Variant(true);
  if (args.made_by_try) options["made_by_try"] = sdbus::Variant(true);
  if (args.scratch_home) options["scratch_home"] = sdbus::Variant(true);
  if (!args.quota.empty()) options["quota_bytes"] = sdbus::Variant(ParseSize(args.quota, "--quota"));
  if (!args.ttl.empty()) options["ttl_sec"] = sdbus::Variant(ParseDuration(args.ttl, "--ttl"));
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
  ManagerProxy manager(ctx.Bus());
  PolkitAgent agent;
  sdbus::ObjectPath path;
  manager.raw()
      .callMethod("CreateSandbox")
      .onInterface(sandboxd::api::kManagerInterface)
      .withTimeout(std::chrono::minutes(10))  // polkit may be waiting for a password
      .withArguments(roots, options, ctx.InteractiveFlag())
      .storeResultsTo(path);
  std::cout << path.substr(path.rfind('/') + 1) << "\n";
  return 0;
}

int VerbList(Context& ctx) {
  ManagerProxy manager(ctx.Bus());
  auto list = manager.ListSandboxes();
  if (ctx.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& entry : list)
      out.push_back({{"id", entry.get<0>()}, {"name", entry.get<1>()}, {"owner", entry.get<2>()},
                     {"state", entry.get<3>()}, {"roots", entry.get<4>()}});
    std::cout << ctx.Json(out) << "\n";
    return 0;
  }
  if (list.empty()) {
    std::cerr << "No sandboxes.\n";
    return 0;
  }
  size_t name_width = 4;
  for (const auto& entry : list) name_width = std::max(name_width, entry.get<1>().size());
  std::cout << PadRight("ID", 16) << "  " << PadRight("NAME", name_width) << "  " << PadRight("STATE", 9) << "  ROOTS\n";
  for (const auto& entry : list)
    std::cout << PadRight(entry.get<0>(), 16) << "  " << PadRight(entry.get<1>(), name_width) << "  " << PadRight(entry.get<3>(), 9)
              << "  " << JoinRoots(entry.get<4>()) << "\n";
  return 0;
}

int VerbShow(Context& ctx, const std::string& id_or_name) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  auto info = sandbox.GetInfo();
  auto text = [&info](const char* key) { return info.count(key) ? info[key].get<std::string>() : std::string(); };
  auto number = [&info](const char* key) { return info.count(key) ? info[key].get<uint32_t>() : 0u; };
  std::string id = text("id"), name = text("name"), state = text("state");
  uint32_t owner = number("owner"), running = number("running_jobs");
  auto roots = info.count("roots") ? info["roots"].get<std::vector<std::string>>() : std::vector<std::string>{};
  uint64_t created = info.count("created_usec") ? info["created_usec"].get<uint64_t>() : 0;
  bool network = info.count("network") && info["network"].get<bool>();
  bool shared = info.count("shared") && info["shared"].get<bool>();
  bool scratch_home = info.count("scratch_home") && info["scratch_home"].get<bool>();
  uint64_t quota = info.count("quota_bytes") ? info["quota_bytes"].get<uint64_t>() : 0;
  uint64_t ttl = info.count("ttl_sec") ? info["ttl_sec"].get<uint64_t>() : 0;
  auto strings = [&info](const char* key) { return info.count(key) ? info[key].get<std::vector<std::string>>() : std::vector<std::string>{}; };
  std::vector<std::string> hide = strings("hide"), allow_sockets = strings("allow_sockets"), allow_hosts = strings("allow_hosts");
  // A review an agent asked for (request_review), while it waits for the owner.
  const std::string asked = text("review_requested");
  const int64_t asked_usec = info.count("review_requested_usec") ? info["review_requested_usec"].get<int64_t>() : 0;
  if (ctx.json) {
    nlohmann::json out = {{"id", id}, {"name", name}, {"state", state}, {"owner", owner}, {"roots", roots},
                          {"created_usec", created}, {"running_jobs", running}, {"network", network},
                          {"shared", shared}, {"quota_bytes", quota}, {"ttl_sec", ttl}, {"hide", hide},
                          {"allow_sockets", allow_sockets}, {"allow_hosts", allow_hosts}, {"scratch_home", scratch_home},
                          {"review_requested", nullptr}};
    if (asked_usec != 0) out["review_requested"] = {{"message", asked}, {"time_usec", asked_usec}};
    std::cout << ctx.Json(out) << "\n";
    return 0;
  }
  std::cout << "Id: " << id << "\nName: " << name << "\nState: " << state << "\nOwner: " << owner << "\n";
  for (size_t i = 0; i < roots.size(); ++i)
    std::cout << (i == 0 ? "Roots: " : "       ") << (roots.size() > 1 ? std::to_string(i) + "/ " : "") << roots[i] << "\n";
  std::cout << "Created: " << FormatTime(created) << "\nRunning jobs: " << running << "\nNetwork: " << (network ? "yes" : !allow_hosts.empty() ? "these hosts only" : "no") << "\nShared: " << (shared ? "yes" : "no")
            << "\nQuota: " << (quota ? std::to_string(quota) + " bytes" : std::string("none"))
            << "\nTTL: " << (ttl ? std::to_string(ttl) + " s idle" : std::string("none"))
            << "\nScratch home: " << (scratch_home ? "yes (jobs write the home into the sandbox, never a change)" : "no");
  for (const auto& path : hide) std::cout << "\nHidden: " << path;
  for (const auto& path : allow_sockets) std::cout << "\nAllowed socket: " << path;
  for (const auto& host : allow_hosts) std::cout << "\nAllowed host: " << host;
  // The message is an agent's words: no byte of it may steer the terminal.
  if (asked_usec != 0)
    std::cout << "\nReview asked: " << FormatTime(static_cast<uint64_t>(asked_usec)) << ": \"" << sandboxd::api::EscapeControlBytes(asked) << "\"";
  std::cout << "\n";
  return 0;
}

int VerbDiscard(Context& ctx, const std::string& id_or_name, bool cancel_jobs) {
  std::string path = ctx.ResolveSandbox(id_or_name);
  EndRunningJobs(ctx, path, id_or_name, "discard", cancel_jobs);
  SandboxProxy sandbox(ctx.Bus(), path);
  sandbox.raw().callMethod("Discard").onInterface(sandboxd::api::kSandboxInterface).withTimeout(std::chrono::minutes(10));
  return 0;
}

int VerbSuspend(Context& ctx, const std::string& id_or_name) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  uint64_t bytes = 0;
  {
    ProgressFollower progress(ctx, sandbox.raw().getObjectPath(), "suspend");
    sandbox.raw().callMethod("Suspend").onInterface(sandboxd::api::kSandboxInterface).withTimeout(std::chrono::hours(1)).storeResultsTo(bytes);
  }
  if (!ctx.json) std::cout << "Suspended " << id_or_name << ": its changes are archived (" << bytes << " bytes)\n";
  return 0;
}

int VerbResume(Context& ctx, const std::string& id_or_name) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  ProgressFollower progress(ctx, sandbox.raw().getObjectPath(), "resume");
  sandbox.raw().callMethod("Resume").onInterface(sandboxd::api::kSandboxInterface).withTimeout(std::chrono::hours(1));
  return 0;
}

int VerbDestroy(Context& ctx, const std::string& id_or_name, bool cancel_jobs) {
  std::string path = ctx.ResolveSandbox(id_or_name);
  EndRunningJobs(ctx, path, id_or_name, "destroy", cancel_jobs);
  SandboxProxy sandbox(ctx.Bus(), path);
  sandbox.raw().callMethod("Destroy").onInterface(sandboxd::api::kSandboxInterface).withTimeout(std::chrono::minutes(10));
  return 0;
}

}  // namespace sandboxctl
