// `sandboxctl usage [--all]`: what the caller's sandboxes (or, with --all and polkit's manage
// action, everyone's) cost on disk, one line each and a total.

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "polkit_agent.h"
#include "quote_path.h"
#include "text_lines.h"
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
  // A table whose columns line up whatever the names' lengths: text left, figures right.
  std::vector<std::vector<std::string>> table = {{"ID", "NAME", "STATE", "CHANGES", "ENTRIES", "ARCHIVED", "KEPT FOR UNDO", "TOTAL"}};
  for (const auto& entry : out)
    table.push_back({entry["id"], sandboxd::api::EscapeControlBytes(entry["name"].get<std::string>()), entry["state"],
                     sandboxd::units::HumanBytes(entry["changes_bytes"]), std::to_string(entry["changes_entries"].get<uint64_t>()),
                     sandboxd::units::HumanBytes(entry["archive_bytes"]), sandboxd::units::HumanBytes(entry["kept_bytes"]),
                     sandboxd::units::HumanBytes(entry["total_bytes"])});
  std::vector<size_t> widths(table[0].size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  if (!out.empty())
    for (const auto& row : table) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) line += (i == 0 ? "" : "  ") + (i < 3 ? PadRight(row[i], widths[i]) : PadLeft(row[i], widths[i]));
      while (!line.empty() && line.back() == ' ') line.pop_back();
      std::cout << line << "\n";
    }
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
