#include "display_decisions.h"


#include <nlohmann/json.hpp>

#include <stdexcept>

#include "display_draw.h"
#include "quote_path.h"
#include "utf8.h"

namespace sandboxd::display {
namespace {

std::string RawName(const nlohmann::json& object, const char* key) {
  if (!object.contains(key)) return "";
  auto name = api::NameFromWire(object.at(key).get<std::string>());
  if (!name) throw std::runtime_error(std::string("changes gave a ") + key + " that is no wire name: " + object.at(key).dump());
  return *name;
}

std::string Text(const nlohmann::json& object, const char* key) { return object.contains(key) ? object.at(key).get<std::string>() : ""; }

Verdict DrawVerdict() {
  int drawn = Pick(0, 20);
  return drawn < 9 ? Verdict::kApproved : drawn < 14 ? Verdict::kRejected : Verdict::kPending;
}

Verdict Other(Verdict verdict) { return verdict == Verdict::kApproved ? Verdict::kRejected : Verdict::kApproved; }

}  // namespace

std::vector<Listed> ParseListed(const std::string& json) {
  std::vector<Listed> listed;
  for (const auto& object : nlohmann::json::parse(json)) {
    Listed entry;
    entry.name = RawName(object, "path");
    entry.kind = Text(object, "kind");
    entry.type = Text(object, "type");
    entry.old_type = Text(object, "old_type");
    entry.new_type = Text(object, "new_type");
    entry.review = Text(object, "review");
    entry.old_mode = object.value("old_mode", 0u);
    entry.new_mode = object.value("new_mode", 0u);
    entry.unreadable = object.value("unreadable", false);
    entry.renamed_from = RawName(object, "renamed_from");
    entry.renamed_to = RawName(object, "renamed_to");
    listed.push_back(std::move(entry));
  }
  return listed;
}

std::string Typed(const Selection& selection) {
  std::string typed = api::QuotePath(selection.name);
  if (typed.empty() || typed.front() != '"') typed = "\"" + typed + "\"";
  if (selection.hunk > 0) typed += ":" + std::to_string(selection.hunk);
  if (selection.part > 0) typed += "." + std::to_string(selection.part);
  return typed;
}

Decisions DrawDecisions(const std::vector<Listed>& changes, const std::map<std::string, HunkShape>& shapes) {
  Decisions decisions;
  std::vector<std::pair<Verdict, Selection>> finals;
  auto decide = [&](const Selection& selection, Verdict verdict) {
    if (verdict == Verdict::kPending) return;
    finals.emplace_back(verdict, selection);
    if (verdict == Verdict::kApproved) decisions.approved.push_back(selection);
  };
  for (const auto& change : changes) {
    // A new directory is taken along by what is taken beneath it; deciding it would decide all
    // that too (a PATH selector names every change beneath). The deleted half of a rename goes
    // with its added half.
    if (change.kind != "deleted" && change.type == "directory") continue;
    if (!change.renamed_to.empty()) continue;
    auto shape = shapes.find(change.name);
    if (shape != shapes.end() && Pick(0, 3) > 0) {  // by hunk two times in three
      bool any = false;
      for (int hunk = 1; hunk <= static_cast<int>(shape->second.size()); ++hunk) {
        int parts = shape->second[static_cast<size_t>(hunk - 1)];
        if (parts >= 2 && Pick(0, 3) > 0) {
          decisions.tags.push_back("decided by part");
          for (int part = 1; part <= parts; ++part) {
            Verdict verdict = DrawVerdict();
            any = any || verdict == Verdict::kApproved;
            decide({change.name, hunk, part}, verdict);
          }
        } else {
          Verdict verdict = DrawVerdict();
          any = any || verdict == Verdict::kApproved;
          decide({change.name, hunk, 0}, verdict);
        }
      }
      decisions.by_hunk[change.name] = any;
      decisions.tags.push_back("decided by hunk");
      continue;
    }
    // A rename is decided as one, by either half's name.
    std::string name = !change.renamed_from.empty() && OneIn(2) ? change.renamed_from : change.name;
    if (!change.renamed_from.empty()) decisions.tags.push_back(name == change.name ? "rename decided by its new name" : "rename decided by its old name");
    Verdict verdict = DrawVerdict();
    decisions.whole[name] = verdict;
    decide({name, 0, 0}, verdict);
  }
  // Some decided twice, the other verdict first; then the rest in a drawn order.
  std::vector<std::pair<Verdict, Selection>> steps;
  for (const auto& [verdict, selection] : finals)
    if (OneIn(4)) {
      steps.emplace_back(Other(verdict), selection);
      decisions.tags.push_back("decided twice");
    }
  for (size_t i = finals.size(); i > 1; --i)
    std::swap(finals[i - 1], finals[static_cast<size_t>(Pick(0, static_cast<int>(i)))]);
  steps.insert(steps.end(), finals.begin(), finals.end());
  // Consecutive steps of one verdict go in one call, unless the call is cut there.
  for (const auto& [verdict, selection] : steps) {
    if (decisions.calls.empty() || decisions.calls.back().first != verdict || OneIn(4))
      decisions.calls.emplace_back(verdict, std::vector<Selection>{});
    decisions.calls.back().second.push_back(selection);
  }
  return decisions;
}

std::string DescribeCalls(const Decisions& decisions) {
  std::string text;
  for (const auto& [verdict, selections] : decisions.calls) {
    text += verdict == Verdict::kApproved ? "approve" : "reject";
    for (const auto& selection : selections) text += " " + Typed(selection);
    text += "\n";
  }
  return text.empty() ? "(none)\n" : text;
}

}  // namespace sandboxd::display
