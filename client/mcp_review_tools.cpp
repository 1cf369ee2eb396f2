// The review tools of `sandboxctl mcp`: request_review tells the owner that the agent asks for
// a review (Sandbox.RequestReview: a signal, the journal, the review log), and review_status
// answers what the owner decided and the notes they left (the change list's decisions and
// Sandbox.GetReviewLog), so that the agent can act on them. Neither decides anything.

#include <time.h>

#include <map>

#include "change_list.h"
#include "local_time.h"
#include "mcp_tools.h"
#include "object_paths.h"
#include "proxies.h"
#include "quote_path.h"
#include "utf8.h"

namespace sandboxctl::mcp {
namespace {

using nlohmann::json;

/// How many entries of the review log review_status answers with.
constexpr uint32_t kLogEntries = 50;
/// How many changes it lists by name at most (the rest are counted).
constexpr size_t kListedDecisions = 500;

/// A note or message as the text answer quotes it: the owner's words, control bytes shown.
std::string Quoted(const std::string& text) { return "\"" + sandboxd::api::EscapeControlBytes(text) + "\""; }

}  // namespace

json ChangeObject(const ListedChange& change) {
  json object = {{"root", change.root}, {"path", change.path}, {"kind", change.kind}, {"review", change.review}, {"conflict", change.conflict}};
  if (change.review == "partial") {
    object["approved_hunks"] = change.approved_hunks;
    object["rejected_hunks"] = change.rejected_hunks;
    if (change.hunks) object["hunks"] = *change.hunks;
  }
  return object;
}

ToolResult SandboxTools::RequestReview(const json& arguments, Cancellation&) {
  const std::string path = SandboxOf(arguments);
  const std::string message = arguments.value("message", std::string());
  SandboxProxy sandbox(ctx_.Bus(), path);
  sandbox.RequestReview(message);
  const std::string id = path.substr(path.rfind('/') + 1);
  return {"Asked the owner to review sandbox " + id +
              ". They review and commit (or reject, with notes) in their own time; review_status tells you what they decided.",
          json{{"sandbox", id}, {"message", message}}, false};
}

ToolResult SandboxTools::ReviewStatus(const json& arguments, Cancellation&) {
  const std::string path = SandboxOf(arguments);
  SandboxProxy sandbox(ctx_.Bus(), path);
  auto info = sandbox.GetInfo();
  const std::string id = info.at("id").get<std::string>();

  std::map<std::string, size_t> counts;
  std::string decided_text;
  json changes = json::array();
  // A suspended sandbox's changes are archived: its log still tells what the owner did.
  const std::string state = info.at("state").get<std::string>();
  const bool active = state == "active";
  size_t total = !active ? 0 : ForEachChange(ctx_, path, [&](const ListedChange& change, std::string_view) {
    ++counts[change.review];
    if (changes.size() >= kListedDecisions) return;
    changes.push_back(ChangeObject(change));
    decided_text += "  " + change.review + std::string(change.review.size() < 8 ? 8 - change.review.size() : 0, ' ') + " " +
                    ChangeLetter(change.kind) + " " + sandboxd::api::ShowWireName(change.path) + (change.review == "partial" ? ReviewNote(change) : "") +
                    "\n";
  });

  std::string text = "Sandbox " + id + " (" + info.at("name").get<std::string>() + "): ";
  if (!active) {
    text += "it is " + state + ": its changes are archived until the owner resumes it.\n";
  } else if (total == 0) {
    text += "no changes wait for review.\n";
  } else {
    text += std::to_string(total) + (total == 1 ? " change: " : " changes: ");
    bool first = true;
    for (const char* state : {"approved", "partial", "rejected", "pending"}) {
      if (counts[state] == 0) continue;
      text += std::string(first ? "" : ", ") + std::to_string(counts[state]) + " " + state;
      first = false;
    }
    text += ".\n" + decided_text;
    if (total > changes.size()) text += "  [" + std::to_string(total - changes.size()) + " more not listed]\n";
  }

  std::vector<sdbus::Struct<int64_t, std::string, std::vector<std::string>, std::string>> entries = sandbox.GetReviewLog(kLogEntries);
  json log = json::array();
  std::string notes;
  for (const auto& entry : entries) {
    const int64_t time_usec = entry.get<0>();
    const std::string& act = entry.get<1>();
    const std::vector<std::string>& what = entry.get<2>();
    const std::string& note = entry.get<3>();
    log.push_back({{"time_usec", time_usec}, {"act", act}, {"what", what}, {"note", note}});
    std::string line = "  " + LocalTime(time_usec) + " ";
    if (act == "review-asked") {
      line += "you asked for a review" + (note.empty() ? "" : ": " + Quoted(note));
    } else if (act == "committed") {
      line += "the owner committed " + (what.empty() ? std::string("changes") : what[0] + " changes");
    } else if (act == "discarded") {
      line += "the owner discarded every change";
    } else {
      std::string named;
      for (const auto& selector : what) named += (named.empty() ? "" : ", ") + (selector == "." ? std::string("everything") : sandboxd::api::ShowWireName(selector));
      line += "the owner " + act + " " + named + (note.empty() ? "" : ": " + Quoted(note));
    }
    notes += line + "\n";
  }
  text += notes.empty() ? "The owner has not decided anything yet.\n" : "What the owner did, newest first:\n" + notes;

  json structured = {{"sandbox", id}, {"state", state}, {"changes", changes}, {"total", total}, {"log", log}};
  if (info.count("review_requested") > 0) {
    const int64_t asked = info.at("review_requested_usec").get<int64_t>();
    structured["review_requested"] = {{"message", info.at("review_requested").get<std::string>()}, {"time_usec", asked}};
    text += "Your review request of " + LocalTime(asked) + " waits for the owner.\n";
  }
  return {text, structured, false};
}

}  // namespace sandboxctl::mcp
