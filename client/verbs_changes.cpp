// Verbs about the change set: changes, diff, commit.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "change_filter.h"
#include "change_list.h"
#include "diff_output.h"
#include "diff_summary.h"
#include "git_fold.h"
#include "git_ignored.h"
#include "local_time.h"
#include "pipe_call.h"
#include "polkit_agent.h"
#include "progress_follower.h"
#include "proxies.h"
#include "quote_path.h"
#include "review_changes.h"
#include "selector.h"
#include "typed_selectors.h"
#include "wire_selector.h"
#include "units.h"
#include "utf8.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

using sandboxd::api::Selector;
/// Diff's options (a{sv}).
using DiffOptions = std::map<std::string, sdbus::Variant>;

/// The paths of the sandbox's changes, listed when a typed selector needs them (typed_selectors.h).
ChangePaths PathsOf(Context& ctx, const std::string& sandbox_path) {
  return [&ctx, sandbox_path] {
    std::vector<std::string> paths;
    ForEachChange(ctx, sandbox_path, [&](const ListedChange& change, std::string_view) { paths.push_back(change.path); });
    return paths;
  };
}

/// How many roots the sandbox at `sandbox_path` has, asked when first needed.
std::function<size_t()> RootCount(Context& ctx, const std::string& sandbox_path) {
  return [&ctx, sandbox_path] { return SandboxProxy(ctx.Bus(), sandbox_path).GetInfo()["roots"].get<std::vector<std::string>>().size(); };
}

/// Commit's selectors as it takes them: the paths (wire names) alone.
std::vector<std::string> PathsOf(const std::vector<Selector>& selectors) {
  std::vector<std::string> paths;
  for (const auto& selector : selectors) paths.push_back(selector.path);
  return paths;
}

/// " [conflict: why]" on a change that conflicts with the live tree (commit needs --force).
/// On a terminal, as git status colours its short form: what the next commit takes (approved,
/// git's staged) green, what waits for a decision (git's unstaged) red, a rejected change dim;
/// a conflict bold red. Nothing when not a terminal or with NO_COLOR.
struct ChangeColors {
  bool on = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
  std::string Of(const ListedChange& change) const {
    if (!on) return "";
    if (change.review == "approved") return "\033[32m";
    if (change.review == "rejected") return "\033[2m";
    return change.review == "partial" ? "\033[33m" : "\033[31m";
  }
  std::string Conflict() const { return on ? "\033[1;31m" : ""; }
  std::string Reset() const { return on ? "\033[m" : ""; }
};

/// Calls `each` with every change as ForEachChange does, and whether git ignores it
/// (GitIgnored::OfChanges: every side of it): where a root is in a git work tree, a page of
/// changes at a time is asked about before it is handed out.
void ForEachChangeWithIgnored(Context& ctx, const std::string& sandbox_path, const GitIgnored& git,
                              const std::function<void(const ListedChange&, std::string_view, bool ignored)>& each) {
  // Whether to ask git is decided at the first change: an empty change set asks nothing.
  std::optional<bool> folding;
  std::vector<std::pair<ListedChange, std::string>> page;
  auto hand_out = [&] {
    std::vector<GitIgnored::Sides> changes;
    for (const auto& [change, line] : page) changes.push_back(GitIgnored::Sides::Of(change));
    std::vector<bool> ignored = git.OfChanges(changes);
    for (size_t i = 0; i < page.size(); ++i) each(page[i].first, page[i].second, ignored[i]);
    page.clear();
  };
  ForEachChange(ctx, sandbox_path, [&](const ListedChange& change, std::string_view line) {
    if (!folding) folding = git.any();
    if (!*folding) return each(change, line, false);
    page.emplace_back(change, std::string(line));
    if (page.size() == 4096) hand_out();
  });
  if (!page.empty()) hand_out();
}

/// What a commit asks for, read from one listing of the change set: the selectors `patterns`
/// leave of `selectors` among the changes it takes (`selectors` as they are without patterns),
/// and how many of the changes it takes are paths git ignores: what `changes` and `diff`
/// folded away, which the commit must not take unsaid (0 without a git work tree).
struct CommitPlan {
  std::vector<Selector> named;  ///< empty: every change the commit takes
  size_t ignored_taken = 0;
};

CommitPlan PlanCommit(Context& ctx, const std::string& sandbox_path, const std::vector<Selector>& selectors,
                      const PathPatterns& patterns, bool all) {
  CommitPlan plan{selectors};
  GitIgnored git = GitIgnored::OfSandbox(ctx, sandbox_path);
  if (patterns.empty() && !git.any()) return plan;
  std::vector<ChangeEntry> entries;
  std::vector<std::string> ignored_taken;  // if the selectors name them
  ForEachChangeWithIgnored(ctx, sandbox_path, git, [&](const ListedChange& change, std::string_view, bool ignored) {
    if (!patterns.empty())
      entries.push_back({change.path, Reviewed(change).State(), change.renamed_from.empty() ? change.renamed_to : change.renamed_from});
    if (ignored && CommitTakes(change.review, all)) ignored_taken.push_back(change.path);
  });
  if (!patterns.empty()) {
    plan.named = NarrowSelectors(entries, selectors, patterns, [all](const std::string& review) { return CommitTakes(review, all); });
    if (plan.named.empty()) return plan;  // nothing passes: nothing is taken
  }
  sandboxd::api::SelectorIndex index(plan.named);
  for (const auto& path : ignored_taken)
    if (plan.named.empty() || index.AnyNames(path)) ++plan.ignored_taken;
  return plan;
}

/// The selectors that name what `selectors` and `patterns` leave of the sandbox's changes
/// (change_filter.h).
std::vector<Selector> SelectorsPassing(Context& ctx, const std::string& sandbox_path, const std::vector<Selector>& selectors,
                                       const PathPatterns& patterns) {
  std::vector<ChangeEntry> entries;
  for (const auto& change : ReadChanges(ctx, sandbox_path))
    entries.push_back({change.path, change.State(), change.renamed_from.empty() ? change.renamed_to : change.renamed_from});
  return NarrowSelectors(entries, selectors, patterns);
}

/// `json` as dump(2) shows it, each line indented by two more spaces (an element of an array).
std::string IndentedElement(const nlohmann::json& json) {
  std::string text = json.dump(2);
  std::string indented = "  ";
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  return indented;
}

}  // namespace

int VerbChanges(Context& ctx, const std::string& id_or_name, const PathPatterns& patterns) {
  std::string path = ctx.ResolveSandbox(id_or_name);
  // Printed as they come: a change set may be millions of entries long. --json prints one
  // array of the daemon's objects ("path", "kind", "root" and the details), exact names kept.
  size_t shown = 0;
  const ChangeColors colors;
  const bool on_terminal = isatty(STDOUT_FILENO);
  // Written a buffer at a time: a line per change, a million of them.
  std::string out;
  auto flush = [&] {
    std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  };
  size_t folded = 0;
  // A repository's own data is one line per repository (git_fold.h), unless --git; --json lists
  // every change as it is, for scripts.
  GitFold git(RootCount(ctx, path));
  auto each = [&](const ListedChange& change, std::string_view line, bool ignored) {
    if (!patterns.Passes(change.path)) return;
    if (!ctx.json && !ctx.show_git_files && git.Take(change)) return;
    if (ctx.json) {
      // Every key the daemon wrote, known here or not; never folded, marked.
      auto object = nlohmann::json::parse(line);
      if (ignored) object["ignored"] = true;
      if (ctx.json_short) {
        out += shown == 0 ? "[" : ",";
        out += object.dump();
      } else {
        out += shown == 0 ? "[\n" : ",\n";
        out += IndentedElement(object);
      }
    } else if (ignored && !ctx.show_ignored) {
      ++folded;
      return;
    } else {
      // "X path" as the contract has it; the other half of a rename follows in parentheses,
      // a decision, once there is one, in brackets. Names as git prints them (quote_path.h).
      out += colors.Of(change);
      out += ChangeLetter(change.kind);
      out += ' ';
      out += sandboxd::api::ShowWireName(change.path);
      out += RenameNote(change);
      if (on_terminal) out += SizeNote(change);
      out += ReviewNote(change);
      if (ignored) out += " [ignored]";
      if (change.unreadable) out += " [unreadable: not shown, approved only by name]";
      out += colors.Reset();
      if (std::string conflict = ConflictNote(change); !conflict.empty()) out += colors.Conflict() + conflict + colors.Reset();
      out += '\n';
    }
    ++shown;
    if (out.size() >= 64 * 1024) flush();
  };
  try {
    ForEachChangeWithIgnored(ctx, path, GitIgnored::OfSandbox(ctx, path), each);
  } catch (...) {
    flush();  // what came before the failure is shown, as it would have been unbuffered
    throw;
  }
  if (!git.empty())
    for (const auto& fold : git.Lines(ctx, path)) {
      out += fold;
      out += '\n';
      ++shown;
    }
  if (folded) out += "! " + std::to_string(folded) + (folded == 1 ? " path" : " paths") + " ignored by git (--ignored lists them)\n";
  if (ctx.json) out += shown == 0 ? "[]\n" : ctx.json_short ? "]\n" : "\n]\n";
  flush();
  std::cout.flush();
  return 0;
}

int VerbDecide(Context& ctx, const std::string& id_or_name, const std::vector<std::string>& typed, bool all, bool approve,
               const PathPatterns& patterns, const std::optional<std::string>& note) {
  if (all == !typed.empty()) {
    std::cerr << (approve ? "approve" : "reject") << ": name changes (PATH or PATH:N) or give --all, not both\n";
    return 2;
  }
  if (note && note->empty()) {
    std::cerr << (approve ? "approve" : "reject") << ": --note takes a text (leave it out for none)\n";
    return 2;
  }
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  const std::vector<Selector> selectors = ResolveTypedSelectors(typed, PathsOf(ctx, sandbox.raw().getObjectPath()), id_or_name);
  std::vector<Selector> named = selectors;
  uint64_t flags = all ? sandboxd::api::kFlagEveryChange : 0;
  if (!patterns.empty()) {
    // The passing changes go by name: "every change" would take the others too.
    named = SelectorsPassing(ctx, sandbox.raw().getObjectPath(), selectors, patterns);
    flags = 0;
    if (named.empty()) {
      std::cerr << "sandboxctl: no change in sandbox " << id_or_name << " passes " << patterns.Describe() << "; nothing was "
                << (approve ? "approved\n" : "rejected\n");
      return 1;
    }
  }
  uint32_t decided = 0;
  if (note) {
    sandbox.raw()
        .callMethod("Decide")
        .onInterface(sandboxd::api::kSandboxInterface)
        .withTimeout(std::chrono::minutes(10))
        .withArguments(sandboxd::api::ToWire(named), std::string(approve ? "approved" : "rejected"),
                       std::map<std::string, sdbus::Variant>{{"note", sdbus::Variant(*note)}}, flags)
        .storeResultsTo(decided);
  } else {
    sandbox.raw()
        .callMethod(approve ? "Approve" : "Reject")
        .onInterface(sandboxd::api::kSandboxInterface)
        .withTimeout(std::chrono::minutes(10))
        .withArguments(sandboxd::api::ToWire(named), flags)
        .storeResultsTo(decided);
  }
  std::cerr << (approve ? "Approved " : "Rejected ") << decided << (decided == 1 ? " change or hunk.\n" : " changes or hunks.\n");
  return 0;
}

/// diff --stat / --name-only: the same diff, summed up per file (diff_summary.h).
int SummarizeDiff(Context& ctx, const std::string& path, const std::vector<Selector>& named, DiffForm form) {
  DiffSummary summary;
  CallIntoPipe(ctx, path, {"Diff", [&](sdbus::MethodCall& call, const sdbus::UnixFd& out) { call << sandboxd::api::ToWire(named) << out << DiffOptions{}; }, {}},
               [&](std::string_view data) { summary.Add(data); });
  winsize size{};
  size_t width = isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
  std::string text = form == DiffForm::kStat ? summary.Stat(width) : summary.NameOnly();
  // Names as git shows them: no byte of one may steer the terminal.
  std::cout << sandboxd::api::EscapeControlBytes(text) << std::flush;
  return 0;
}

int VerbDiff(Context& ctx, const std::string& id_or_name, const std::vector<std::string>& typed,
             const PathPatterns& patterns, DiffForm form, bool binary) {
  std::string path = ctx.ResolveSandbox(id_or_name);
  const std::vector<Selector> selectors = ResolveTypedSelectors(typed, PathsOf(ctx, path), id_or_name);
  std::vector<Selector> named = selectors;
  // Paths git ignores are left out (unless --ignored), and a repository's own data (unless
  // --git or named by its own path: git_fold.h): the rest goes by name.
  size_t folded = 0;
  std::map<std::string, size_t> git_left;  // repository → its files left out
  std::vector<ChangeEntry> entries;
  if (!ctx.show_ignored || !ctx.show_git_files) {
    GitIgnored git = GitIgnored::OfSandbox(ctx, path);
    GitFold repositories(RootCount(ctx, path));
    // Counted only among what was asked for: an ignored path the selectors do not name was
    // left out by them, not by the folding, and is not said to be.
    const sandboxd::api::SelectorIndex asked(selectors);
    auto was_asked = [&](const std::string& changed) {
      return selectors.empty() || asked.AnyNames(changed) || !asked.HunksOf(changed).empty();
    };
    struct Seen {
      ChangeEntry entry;
      bool ignored, counted, directory;
      std::optional<std::string> git_dir;
    };
    std::vector<Seen> seen;
    // A change git shows that put a directory where a file was (its diff: the file deleted)
    // cannot be named without what it holds: the ignored paths beneath it are shown with it.
    std::set<std::string> carrying;
    if (git.any())
      ForEachChangeWithIgnored(ctx, path, git, [&](const ListedChange& change, std::string_view, bool ignored) {
        ignored = ignored && !ctx.show_ignored;
        std::optional<std::string> git_dir;
        if (!ctx.show_git_files && !asked.NamesExactly(change.path)) git_dir = repositories.GitDirOf(change);
        if (!ignored && !git_dir && change.new_type == "directory" && !change.old_type.empty() && change.old_type != "directory")
          carrying.insert(change.path);
        seen.push_back({{change.path, change.review, change.renamed_from.empty() ? change.renamed_to : change.renamed_from},
                        ignored, patterns.Passes(change.path) && was_asked(change.path), change.type == "directory", git_dir});
      });
    for (auto& [entry, ignored, counted, directory, git_dir] : seen) {
      for (size_t slash = entry.path.rfind('/'); ignored && slash != std::string::npos && slash > 0; slash = entry.path.rfind('/', slash - 1))
        ignored = !carrying.count(entry.path.substr(0, slash));
      entry.left_out = ignored || git_dir.has_value();
      if (counted && git_dir && !directory) ++git_left[*git_dir];
      if (counted && !git_dir && ignored) ++folded;
      entries.push_back(std::move(entry));
    }
  }
  for (const auto& [git_dir, files] : git_left)
    std::cerr << "sandboxctl: " << files << (files == 1 ? " file" : " files") << " of git's own data in "
              << sandboxd::api::ShowWireName(git_dir) << " not shown (--git shows them; changes sums them up)\n";
  if (folded > 0 || !git_left.empty()) {
    named = NarrowSelectors(entries, selectors, patterns);
    if (folded > 0)
      std::cerr << "sandboxctl: " << folded << (folded == 1 ? " path" : " paths") << " git ignores not shown (--ignored shows them)\n";
    if (named.empty()) return 0;
  } else if (!patterns.empty()) {
    named = SelectorsPassing(ctx, path, selectors, patterns);
    if (named.empty()) return 0;  // asking with no selector would show every change
  }
  if (form != DiffForm::kPatch) return SummarizeDiff(ctx, path, named, form);
  DiffOptions options;
  if (binary) options.emplace("binary", sdbus::Variant(true));
  DiffOutput output(ctx.no_pager ? DiffOutput::Paging::kNone : DiffOutput::Paging::kPager);
  try {
    CallIntoPipe(ctx, path,
                 {"Diff", [&](sdbus::MethodCall& call, const sdbus::UnixFd& out) { call << sandboxd::api::ToWire(named) << out << options; }, {}},
                 [&](std::string_view data) { output.Write(data.data(), data.size()); });
  } catch (...) {
    output.Finish();  // what came is shown (and the pager ends) before the error
    throw;
  }
  output.Finish();
  // Conflicts are told before a commit is tried: on stderr, after the diff, for what it showed.
  sandboxd::api::SelectorIndex index(named);
  for (const auto& change : ReadChanges(ctx, path)) {
    bool shown = named.empty() || index.AnyNames(change.path) || !index.HunksOf(change.path).empty();
    if (!shown) continue;
    if (!change.conflict.empty())
      std::cerr << "sandboxctl: " << sandboxd::api::ShowWireName(change.path) << " conflicts with the live tree (" << change.conflict
                << "): committing it needs --force\n";
    if (change.unreadable)
      std::cerr << "sandboxctl: " << sandboxd::api::ShowWireName(change.path)
                << " is a file you cannot read: its content is not shown, and only approving it by its own name takes it\n";
  }
  return 0;
}

int VerbCommit(Context& ctx, const std::string& id_or_name, bool all, bool force, const std::vector<std::string>& typed,
               const PathPatterns& patterns) {
  const std::vector<Selector> selectors = TypedPaths(typed);
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  // With --all and patterns, the daemon approves only the pending changes the plan names.
  const auto [named, ignored_taken] = PlanCommit(ctx, sandbox.raw().getObjectPath(), selectors, patterns, all);
  if (!patterns.empty() && named.empty()) {
    std::cerr << "Nothing to commit: no " << (all ? "pending or approved" : "approved") << " change passes " << patterns.Describe() << ".\n";
    return 0;
  }
  uint64_t flags = ctx.InteractiveFlag() | (all ? sandboxd::api::kFlagCommitAll : 0) | (force ? sandboxd::api::kFlagForce : 0);
  PolkitAgent agent;
  uint32_t committed = 0;
  std::vector<std::string> skipped;
  try {
    ProgressFollower progress(ctx, sandbox.raw().getObjectPath(), "commit");
    sandbox.raw()
        .callMethod("Commit")
        .onInterface(sandboxd::api::kSandboxInterface)
        .withTimeout(std::chrono::minutes(30))  // a password prompt, then possibly many files
        .withArguments(PathsOf(named), flags)
        .storeResultsTo(committed, skipped);
  } catch (const sdbus::Error& e) {
    // The daemon's sentence speaks to every client; how to force it here is ours to say.
    if (e.getName() != std::string(sandboxd::api::kErrorPrefix) + "Conflict") throw;
    throw sdbus::Error(e.getName(), e.getMessage() + "; sandboxctl commit --force does");
  }
  for (const auto& message : skipped) std::cerr << message << "\n";
  if (!all && committed == 0)
    std::cerr << "Nothing approved to commit; use --all to commit every change.\n";
  else
    std::cerr << "Committed " << committed << (committed == 1 ? " change" : " changes")
              << (ignored_taken && committed ? " (" + std::to_string(ignored_taken) + " of them git ignores: they are not in changes or diff without --ignored)" : "")
              << ".\n";
  return 0;
}

int VerbUndo(Context& ctx, const std::string& id_or_name) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  PolkitAgent agent;
  int64_t commit = 0;
  {
    ProgressFollower progress(ctx, sandbox.raw().getObjectPath(), "undo");
    sandbox.raw()
        .callMethod("Undo")
        .onInterface(sandboxd::api::kSandboxInterface)
        .withTimeout(std::chrono::minutes(30))  // a password prompt, then possibly many files
        .withArguments(ctx.InteractiveFlag())
        .storeResultsTo(commit);
  }
  std::cerr << "Undid commit " << commit << " of sandbox " << sandboxd::api::EscapeControlBytes(id_or_name)
            << " (sandboxctl log lists them); its changes are back in the sandbox.\n";
  return 0;
}

int VerbLog(Context& ctx, const std::string& id_or_name, bool verbose) {
  SandboxProxy sandbox(ctx.Bus(), ctx.ResolveSandbox(id_or_name));
  constexpr uint32_t kPathsShown = 10000;
  auto commits = sandbox.ListCommits(verbose || ctx.json ? kPathsShown : 0);
  if (ctx.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& commit : commits)
      out.push_back({{"number", commit.get<0>()}, {"state", commit.get<1>()}, {"started_usec", commit.get<2>()}, {"finished_usec", commit.get<3>()},
                     {"entries", commit.get<4>()}, {"paths", commit.get<5>()}});
    std::cout << ctx.Json(out) << "\n";
    return 0;
  }
  if (commits.empty()) {
    std::cerr << "No commits in sandbox " << sandboxd::api::EscapeControlBytes(id_or_name) << " yet.\n";
    return 0;
  }
  for (const auto& commit : commits) {
    const uint64_t entries = commit.get<4>();
    std::cout << "commit " << commit.get<0>() << "  " << LocalTime(commit.get<3>()) << "  " << commit.get<1>() << "  "
              << entries << (entries == 1 ? " entry" : " entries") << "\n";
    if (!verbose) continue;
    for (const auto& path : commit.get<5>()) std::cout << "    " << sandboxd::api::ShowWireName(path) << "\n";
    if (entries > commit.get<5>().size()) std::cout << "    ... and " << entries - commit.get<5>().size() << " more\n";
  }
  return 0;
}

}  // namespace sandboxctl
