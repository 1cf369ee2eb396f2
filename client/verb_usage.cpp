// `sandboxctl usage [--all]`: what the caller's sandboxes (or, with --all and polkit's manage
// action, everyone's) cost on disk, one line each and a total.

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "polkit_agent.h"
#include "proxies.h"
#include "units.h"
#include "verbs.h"

namespace sandboxctl {
int VerbUsage(Context& ctx, bool everyone) {
  ManagerProxy manager(ctx.Bus());
  uint64_t flags = ctx.InteractiveFlag() | (everyone ? sandboxd::api::kFlagEveryUser : 0);
  std::vector<sdbus::Struct<std::string, std::string, uint32_t, std::string, uint64_t, uint64_t, uint64_t, uint64_t>> rows;
  {
    PolkitAgent agent;  // --all asks polkit (manage), which may want a password
    manager.raw()
        .callMethod("GetUsage")
        .onInterface(sandboxd::api::kManagerInterface)
        .withTimeout(std::chrono::minutes(10))
        .withArguments(flags)
        .storeResultsTo(rows);
  }
  uint64_t total = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : rows) {
    uint64_t sum = row.get<4>() + row.get<6>() + row.get<7>();
    total += sum;
    out.push_back({{"id", row.get<0>()}, {"name", row.get<1>()}, {"owner", row.get<2>()}, {"state", row.get<3>()},
                   {"changes_bytes", row.get<4>()}, {"changes_entries", row.get<5>()}, {"archive_bytes", row.get<6>()},
                   {"kept_bytes", row.get<7>()}, {"total_bytes", sum}});
  }
  if (ctx.json) {
    std::cout << ctx.Json(nlohmann::json{{"sandboxes", out}, {"total_bytes", total}}) << "\n";
    return 0;
  }
  for (const auto& entry : out)
    std::cout << entry["id"].get<std::string>() << "  " << entry["name"].get<std::string>() << "  "
              << entry["state"].get<std::string>() << "  changes " << sandboxd::units::HumanBytes(entry["changes_bytes"]) << " ("
              << entry["changes_entries"].get<uint64_t>() << " entries), archived " << sandboxd::units::HumanBytes(entry["archive_bytes"])
              << ", kept for undo " << sandboxd::units::HumanBytes(entry["kept_bytes"]) << "\n";
  std::cout << "Total: " << sandboxd::units::HumanBytes(total) << " in " << rows.size() << " sandbox" << (rows.size() == 1 ? "" : "es") << "\n";
  return 0;
}

int VerbGc(Context& ctx) {
  ManagerProxy manager(ctx.Bus());
  std::vector<sdbus::Struct<std::string, std::string>> removed;
  {
    PolkitAgent agent;  // polkit's manage action, which may want a password
    manager.raw()
        .callMethod("CollectGarbage")
        .onInterface(sandboxd::api::kManagerInterface)
        .withTimeout(std::chrono::minutes(10))
        .withArguments(ctx.InteractiveFlag())
        .storeResultsTo(removed);
  }
  if (ctx.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& entry : removed) out.push_back({{"id", entry.get<0>()}, {"why", entry.get<1>()}});
    std::cout << ctx.Json(out) << "\n";
    return 0;
  }
  for (const auto& entry : removed) std::cout << "Removed " << entry.get<0>() << ": " << entry.get<1>() << "\n";
  if (removed.empty()) std::cout << "Nothing to collect.\n";
  return 0;
}

}  // namespace sandboxctl
