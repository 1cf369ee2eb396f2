// Verbs about the change set: changes, diff, commit.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "change_filter.h"
#include "diff_output.h"
#include "polkit_agent.h"
#include "proxies.h"
#include "quote_path.h"
#include "utf8.h"
#include "review_changes.h"
#include "selector.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

std::string HunkNumbers(const std::vector<uint32_t>& hunks) {
  std::string text;
  for (uint32_t hunk : hunks) text += (text.empty() ? "" : ",") + std::to_string(hunk);
  return text;
}

/// "" for a pending change, " [approved]", " [rejected]", or for a change decided hunk by hunk
/// " [partial: hunks 2 approved, 1 rejected, of 3]".
std::string ReviewNote(const std::map<std::string, sdbus::Variant>& details) {
  auto review = details.find("review");
  if (review == details.end() || review->second.get<std::string>() == "pending") return "";
  std::string state = review->second.get<std::string>();
  if (state != "partial") return " [" + state + "]";
  auto list = [&](const char* key) {
    auto it = details.find(key);
    return it == details.end() ? std::vector<uint32_t>{} : it->second.get<std::vector<uint32_t>>();
  };
  std::string note = " [partial:";
  if (auto approved = list("approved_hunks"); !approved.empty()) note += " hunks " + HunkNumbers(approved) + " approved";
  if (auto rejected = list("rejected_hunks"); !rejected.empty()) note += std::string(note.back() == ':' ? "" : ",") + " hunks " + HunkNumbers(rejected) + " rejected";
  auto count = details.find("hunks");
  if (count != details.end()) note += ", of " + std::to_string(count->second.get<uint32_t>());
  return note + "]";
}

/// " [conflict: why]" on a change that conflicts with the live tree (commit needs --force).
std::string ConflictNote(const std::map<std::string, sdbus::Variant>& details) {
  auto it = details.find("conflict_reason");
  return it == details.end() ? "" : " [conflict: " + it->second.get<std::string>() + "]";
}

/// " (renamed from P)" on the added half of a rename, " (renamed to P)" on the deleted one.
std::string RenameNote(const std::map<std::string, sdbus::Variant>& details) {
  for (const char* key : {"renamed_from", "renamed_to"}) {
    auto it = details.find(key);
    if (it == details.end()) continue;
    std::string words = key == std::string("renamed_from") ? "renamed from " : "renamed to ";
    return " (" + words + sandboxd::api::ShowWireName(it->second.get<std::string>()) + ")";
  }
  return "";
}

/// The selectors that name what `selectors` and `patterns` leave of the sandbox's changes
/// (change_filter.h), among those whose review `acts_on` accepts.
std::vector<std::string> SelectorsPassing(SandboxProxy& sandbox, const std::vector<std::string>& selectors,
                                          const PathPatterns& patterns, const ReviewFilter& acts_on = {}) {
  std::vector<ChangeEntry> entries;
  for (const auto& change : ReadChanges(sandbox))
    entries.push_back({change.path, change.State(), change.renamed_from.empty() ? change.renamed_to : change.renamed_from});
  return NarrowSelectors(entries, selectors, patterns, acts_on);
}

}  // namespace

int VerbChanges(Context& ctx, const std::string& id_or_name, const PathPatterns& patterns) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  std::vector<sdbus::Struct<uint32_t, std::string, std::string, std::map<std::string, sdbus::Variant>>> changes;
  sandbox.raw()
      .callMethod("GetChanges")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(10))
      .storeResultsTo(changes);
  std::erase_if(changes, [&](const auto& change) { return !patterns.Passes(std::get<1>(change)); });
  if (ctx.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& change : changes) {
      const auto& details = change.get<3>();
      nlohmann::json entry = {{"path", change.get<1>()}, {"kind", change.get<2>()}, {"root", change.get<0>()}};
      for (const auto& [key, value] : details) {
        if (value.peekValueType() == "s") entry[key] = value.get<std::string>();
        else if (value.peekValueType() == "u") entry[key] = value.get<uint32_t>();
        else if (value.peekValueType() == "au") entry[key] = value.get<std::vector<uint32_t>>();
        else if (value.peekValueType() == "b") entry[key] = value.get<bool>();
      }
      out.push_back(std::move(entry));
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  static const std::map<std::string, char> kLetters = {
      {"added", 'A'}, {"modified", 'M'}, {"deleted", 'D'}, {"type-changed", 'T'}, {"mode-changed", 'P'}};
  // "X path" as the contract has it; the other half of a rename follows in parentheses, a
  // decision, once there is one, in brackets.
  for (const auto& change : changes) {
    auto letter = kLetters.find(change.get<2>());
    // Names as git prints them (quote_path.h); --json above keeps them exact.
    std::cout << (letter == kLetters.end() ? '?' : letter->second) << ' ' << sandboxd::api::ShowWireName(change.get<1>())
              << RenameNote(change.get<3>()) << ReviewNote(change.get<3>()) << ConflictNote(change.get<3>()) << "\n";
  }
  return 0;
}

int VerbDecide(Context& ctx, const std::string& id_or_name, const std::vector<std::string>& selectors, bool all, bool approve,
               const PathPatterns& patterns) {
  if (all == !selectors.empty()) {
    std::cerr << (approve ? "approve" : "reject") << ": name changes (PATH or PATH:N) or give --all, not both\n";
    return 2;
  }
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  std::vector<std::string> named = selectors;
  uint64_t flags = all ? sandboxd::api::kFlagEveryChange : 0;
  if (!patterns.empty()) {
    // The passing changes go by name: "every change" would take the others too.
    named = SelectorsPassing(sandbox, selectors, patterns);
    flags = 0;
    if (named.empty()) {
      std::cerr << "sandboxctl: no change in sandbox " << id_or_name << " passes " << patterns.Describe() << "; nothing was "
                << (approve ? "approved\n" : "rejected\n");
      return 1;
    }
  }
  uint32_t decided = 0;
  sandbox.raw()
      .callMethod(approve ? "Approve" : "Reject")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(10))
      .withArguments(named, flags)
      .storeResultsTo(decided);
  std::cerr << (approve ? "Approved " : "Rejected ") << decided << (decided == 1 ? " change or hunk.\n" : " changes or hunks.\n");
  return 0;
}

int VerbDiff(Context& ctx, const std::string& id_or_name, const std::vector<std::string>& selectors,
             const PathPatterns& patterns) {
  std::string path = ctx.ResolveSandbox(id_or_name);
  std::vector<std::string> named = selectors;
  if (!patterns.empty()) {
    SandboxProxy sandbox(ctx.Bus(), path);
    named = SelectorsPassing(sandbox, selectors, patterns);
    if (named.empty()) return 0;  // asking with no selector would show every change
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw sdbus::Error("org.freedesktop.DBus.Error.Failed", "cannot create a pipe");
  int read_end = pipe_fds[0];
  // The daemon writes into the pipe while we read it, so the call runs on its own thread (and
  // its own connection): reading and waiting for the reply must not block each other.
  sdbus::UnixFd write_end(pipe_fds[1], sdbus::adopt_fd);
  std::unique_ptr<sdbus::Error> failure;
  std::thread caller([&, write_end = std::move(write_end)]() mutable {
    try {
      auto bus = ctx.OpenBus();
      SandboxProxy sandbox(*bus, path);
      auto call = sandbox.raw().createMethodCall(sandboxd::api::kSandboxInterface, "Diff");
      call << named << write_end;
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
  // Conflicts are told before a commit is tried: on stderr, after the diff, for what it showed.
  SandboxProxy sandbox(ctx.Bus(), path);
  for (const auto& change : ReadChanges(sandbox)) {
    if (change.conflict.empty()) continue;
    bool shown = named.empty() || std::any_of(named.begin(), named.end(), [&](const std::string& selector) {
      auto hunk = sandboxd::api::ParseHunkSelector(selector);
      return sandboxd::api::SelectorNames(selector, change.path) || (hunk && hunk->path == change.path);
    });
    if (shown)
      std::cerr << "sandboxctl: " << sandboxd::api::ShowWireName(change.path) << " conflicts with the live tree (" << change.conflict
                << "): committing it needs --force\n";
  }
  return 0;
}

int VerbCommit(Context& ctx, const std::string& id_or_name, bool all, bool force, const std::vector<std::string>& selectors,
               const PathPatterns& patterns) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  std::vector<std::string> named = selectors;
  if (!patterns.empty()) {
    // With --all the daemon approves only the pending changes these selectors name.
    named = SelectorsPassing(sandbox, selectors, patterns, [all](const std::string& review) { return CommitTakes(review, all); });
    if (named.empty()) {
      std::cerr << "Nothing to commit: no " << (all ? "pending or approved" : "approved") << " change passes " << patterns.Describe() << ".\n";
      return 0;
    }
  }
  uint64_t flags = ctx.InteractiveFlag() | (all ? sandboxd::api::kFlagCommitAll : 0) | (force ? sandboxd::api::kFlagForce : 0);
  PolkitAgent agent;
  uint32_t committed = 0;
  std::vector<std::string> skipped;
  sandbox.raw()
      .callMethod("Commit")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(30))  // a password prompt, then possibly many files
      .withArguments(named, flags)
      .storeResultsTo(committed, skipped);
  for (const auto& message : skipped) std::cerr << message << "\n";
  if (!all && committed == 0)
    std::cerr << "Nothing approved to commit; use --all to commit every change.\n";
  else
    std::cerr << "Committed " << committed << (committed == 1 ? " change.\n" : " changes.\n");
  return 0;
}

int VerbUndo(Context& ctx, const std::string& id_or_name) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  PolkitAgent agent;
  int64_t commit = 0;
  sandbox.raw()
      .callMethod("Undo")
      .onInterface(sandboxd::api::kSandboxInterface)
      .withTimeout(std::chrono::minutes(30))  // a password prompt, then possibly many files
      .withArguments(ctx.InteractiveFlag())
      .storeResultsTo(commit);
  std::cerr << "Undid commit " << commit << "; its changes are back in the sandbox.\n";
  return 0;
}

}  // namespace sandboxctl
