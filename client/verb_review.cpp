// `sandboxctl review SANDBOX`: the change set decided on the terminal, in the manner of
// `git add -p`. Each change, in `changes` order, is shown as its diff: a text modification hunk
// by hunk (hunk N of its diff is what the selector PATH:N names; `s` splits it into parts, part
// M being PATH:N.M), anything else whole. Each answer goes to the daemon at once, so quitting, a
// signal or a lost connection never loses what was already decided. Changes decided before are
// asked again: an answer replaces the decision, `j` keeps it.

#include <termios.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include "diff_output.h"
#include "diff_split.h"
#include "change_list.h"
#include "git_fold.h"
#include "git_ignored.h"
#include "hunk_split.h"
#include "quote_path.h"
#include "review_changes.h"
#include "terminal_keys.h"
#include "utf8.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

enum class Answer { kApprove, kReject, kApproveRest, kRejectRest, kNextUndecided, kNext, kPreviousUndecided, kPrevious, kSplit, kQuit };

constexpr const char* kHunkHelp =
    "y - approve this hunk\n"
    "n - reject this hunk\n"
    "q - quit; the decisions made so far stay\n"
    "a - approve this hunk and all later hunks of the file\n"
    "d - reject this hunk and all later hunks of the file\n"
    "j - leave this hunk undecided, see the next undecided hunk\n"
    "J - leave this hunk undecided, see the next hunk\n"
    "k - leave this hunk undecided, see the previous undecided hunk\n"
    "K - leave this hunk undecided, see the previous hunk\n"
    "s - split the current hunk into smaller hunks\n"
    "? - print help\n";
constexpr const char* kChangeHelp =
    "y - approve this change\n"
    "n - reject this change\n"
    "q - quit; the decisions made so far stay\n"
    "j - leave this change undecided, see the next one\n"
    "? - print help\n";

/// What a review asks about in a text modification: a hunk (part 0), or a part of one it split.
struct Unit {
  size_t hunk = 0;
  size_t part = 0;
  std::string text;  ///< from its "@@" line on
  bool decided = false;  ///< by this review

  /// "2", or "2.1" for a part: what the selector PATH:N or PATH:N.M names.
  std::string Number() const { return std::to_string(hunk) + (part > 0 ? "." + std::to_string(part) : ""); }
};

/// For `try`, whose stdout belongs to the command and to a kept sandbox's id: the review speaks
/// where stderr goes, by pointing stdout there while it lasts (DiffOutput writes to stdout).
class StdoutOntoStderr {
 public:
  StdoutOntoStderr() : saved_(dup(STDOUT_FILENO), sdbus::adopt_fd) {
    fflush(stdout);
    dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutOntoStderr() {
    fflush(stdout);
    dup2(saved_.get(), STDOUT_FILENO);
  }
  StdoutOntoStderr(const StdoutOntoStderr&) = delete;
  StdoutOntoStderr& operator=(const StdoutOntoStderr&) = delete;

 private:
  sdbus::UnixFd saved_;
};

/// DiffOutput (on a terminal only: git's colours, content's control bytes shown visibly) without
/// the pager it starts for a whole diff: a review shows a hunk at a time between questions.
std::unique_ptr<DiffOutput> UnpagedDiffOutput() { return std::make_unique<DiffOutput>(DiffOutput::Paging::kNone); }

/// A name a job chose, as git prints it (quote_path.h).
std::string Quote(const std::string& path) { return sandboxd::api::ShowWireName(path); }

/// ", CONFLICT: changed in the live tree (commit needs --force)" for a change that conflicts.
/// ", UNREADABLE: ..." for a file its owner cannot read, whose content review cannot show.
std::string ConflictNote(const ReviewedChange& change) {
  std::string note = change.conflict.empty() ? "" : ", CONFLICT: " + change.conflict + " (commit needs --force)";
  if (change.unreadable) note += ", UNREADABLE: you cannot read this file, so its content is not shown";
  return note;
}

/// "three.txt (modified file)", "d (added directory, approved)", "x (type-changed from file to symlink)".
std::string Title(const ReviewedChange& change) {
  if (!change.renamed_from.empty()) {
    std::string state = change.State();
    return Quote(change.renamed_from) + " -> " + Quote(change.path) + " (renamed" + (state == "pending" ? "" : ", " + state) +
           ConflictNote(change) + ")";
  }
  std::string what = change.kind == "type-changed" ? "type-changed from " + change.old_type + " to " + change.new_type
                                                   : change.kind + " " + (change.new_type.empty() ? change.old_type : change.new_type);
  std::string state = change.State();
  return Quote(change.path) + " (" + what + (state == "pending" ? "" : ", " + state) + ConflictNote(change) + ")";
}

class Review {
 public:
  Review(Context& ctx, const std::string& sandbox) : ctx_(ctx), sandbox_(ctx.Bus(), ctx.ResolveSandbox(sandbox)) {}
  ReviewOutcome Run();

 private:
  // Each returns false once the user quit.
  bool AskAboutHunks(ReviewedChange& change, const FileSection& file);
  bool AskAboutWhole(ReviewedChange& change, const std::vector<FileSection>& sections);
  /// A repository's data (`members`, indexes into changes_), shown as `line`.
  bool AskAboutRepository(const std::string& line, const std::vector<size_t>& members);
  /// Asks `prompt` about something decided whole until answered; `decide` sends the verdict.
  bool AskWhole(const std::string& prompt, const char* cannot_split, const std::function<void(Verdict)>& decide);
  Answer Ask(const std::string& prompt, const char* help);
  /// Decides units [first, end) of `units`, all in one call.
  void DecideUnits(ReviewedChange& change, std::vector<Unit>& units, size_t first, size_t end, Verdict verdict);
  static Verdict VerdictOf(const ReviewedChange& change, const Unit& unit);
  void DecideWhole(const std::string& path, Verdict verdict);
  void Show(const std::string& diff);
  void Say(const std::string& text);
  void SayIfDecided(Verdict verdict);

  Context& ctx_;
  SandboxProxy sandbox_;
  std::vector<ReviewedChange> changes_;
  TerminalKeys keys_;
  std::unique_ptr<DiffOutput> diff_ = UnpagedDiffOutput();
};

ReviewOutcome Review::Run() {
  // A repository's own data is asked about once, as the line `changes` shows (git_fold.h),
  // after the files; unless --git.
  const std::string sandbox_path = sandbox_.raw().getObjectPath();
  GitFold git([&] { return sandbox_.GetInfo()["roots"].get<std::vector<std::string>>().size(); });
  std::map<std::string, std::vector<size_t>> repositories;  // ".git" → its changes
  ForEachChange(ctx_, sandbox_path, [&](const ListedChange& change, std::string_view) {
    changes_.push_back(Reviewed(change));
    if (ctx_.show_git_files) return;
    if (auto git_dir = git.Take(change)) repositories[*git_dir].push_back(changes_.size() - 1);
  });
  std::set<size_t> in_repositories;
  for (const auto& [git_dir, members] : repositories) in_repositories.insert(members.begin(), members.end());
  if (changes_.empty()) Say("No changes to review.\n");
  std::vector<std::string> paths;
  for (const auto& change : changes_) paths.push_back(change.path);
  // What git ignores is not asked about (unless --ignored): it stays as it is, and is said.
  std::set<std::string> ignored;
  if (!ctx_.show_ignored) {
    GitIgnored git = GitIgnored::OfSandbox(ctx_, sandbox_.raw().getObjectPath());
    if (git.any()) {
      std::vector<GitIgnored::Sides> asked;
      for (const auto& change : changes_) asked.push_back(GitIgnored::Sides::Of(change));
      std::vector<bool> answers = git.OfChanges(asked);
      for (size_t i = 0; i < changes_.size(); ++i)
        if (answers[i]) ignored.insert(changes_[i].path);
    }
    if (!ignored.empty())
      Say(std::to_string(ignored.size()) + (ignored.size() == 1 ? " path" : " paths") +
          " git ignores left as they are (review --ignored goes through them).\n");
  }
  bool quit = false;
  for (size_t i = 0; i < changes_.size(); ++i) {
    auto& change = changes_[i];
    if (!change.renamed_to.empty()) continue;  // a rename is asked about once, at its new path
    if (ignored.count(change.path) || in_repositories.count(i)) continue;
    // Diff of PATH holds the changes beneath a directory too; they are asked about on their own.
    auto sections = SectionsOfChange(SplitDiff(DiffOf(sandbox_, change.path)), change.path, paths);
    Say(Title(change) + "\n");
    bool by_hunk = change.TextModification() && sections.size() == 1 && !sections.front().hunks.empty();
    if (!(by_hunk ? AskAboutHunks(change, sections.front()) : AskAboutWhole(change, sections))) {
      quit = true;
      break;
    }
  }
  if (!quit && !git.empty()) {
    const auto lines = git.Lines(ctx_, sandbox_path);
    const auto dirs = git.GitDirs();
    for (size_t r = 0; r < dirs.size() && r < lines.size(); ++r)
      if (!AskAboutRepository(lines[r], repositories[dirs[r]])) break;
  }
  ReviewOutcome outcome;
  outcome.signal = keys_.Signal();
  auto tally = [&](Verdict verdict) {
    ++(verdict == Verdict::kApproved ? outcome.approved : verdict == Verdict::kRejected ? outcome.rejected : outcome.pending);
  };
  for (const auto& change : changes_)
    for (size_t h = 0; h < change.verdicts.size(); ++h) {
      // A hunk split is counted by its parts.
      auto split = change.parts.find(h + 1);
      if (split == change.parts.end()) tally(change.verdicts[h]);
      else for (Verdict verdict : split->second) tally(verdict);
    }
  return outcome;
}

bool Review::AskAboutHunks(ReviewedChange& change, const FileSection& file) {
  const size_t count = file.hunks.size();
  change.SpreadOverHunks(count);
  Show(file.header);
  std::vector<Unit> units;
  for (size_t h = 1; h <= count; ++h) units.push_back({h, 0, file.hunks[h - 1], false});
  // As git add -p: j/J move on, k/K back; "undecided" is what this review has not decided.
  auto undecided_after = [&](size_t from) {
    for (size_t u = from + 1; u < units.size(); ++u)
      if (!units[u].decided) return u;
    return units.size();
  };
  auto undecided_before = [&](size_t from) -> std::optional<size_t> {
    for (size_t u = from; u-- > 0;)
      if (!units[u].decided) return u;
    return std::nullopt;
  };
  size_t at = 0;
  bool shown = false;
  while (at < units.size()) {
    if (!shown) {
      Show(units[at].text);
      SayIfDecided(VerdictOf(change, units[at]));
      shown = true;
    }
    // s is offered, as git offers it, only where the hunk has more than one run to split into.
    const bool can_split = units[at].part == 0 && sandboxd::api::SplitHunk(units[at].text).size() > 1;
    std::string prompt = "(" + units[at].Number() + "/" + std::to_string(count) + ") Approve this hunk [y,n,q,a,d,j,J,k,K" +
                         (can_split ? ",s" : "") + ",?]? ";
    size_t next = at;
    auto decide = [&](Verdict verdict) {
      DecideUnits(change, units, at, at + 1, verdict);
      next = undecided_after(at);
    };
    switch (Ask(prompt, kHunkHelp)) {
      case Answer::kApprove: decide(Verdict::kApproved); break;
      case Answer::kReject: decide(Verdict::kRejected); break;
      case Answer::kApproveRest: DecideUnits(change, units, at, units.size(), Verdict::kApproved); return true;
      case Answer::kRejectRest: DecideUnits(change, units, at, units.size(), Verdict::kRejected); return true;
      case Answer::kNextUndecided: next = undecided_after(at); break;
      case Answer::kNext: next = at + 1; break;
      case Answer::kPreviousUndecided:
        if (auto before = undecided_before(at)) next = *before;
        else Say("No previous undecided hunk\n");
        break;
      case Answer::kPrevious:
        if (at > 0) next = at - 1;
        else Say("No previous hunk\n");
        break;
      case Answer::kSplit: {
        // git's words; the parts are asked about in its place, numbered as PATH:N.M names them.
        std::vector<std::string> parts = units[at].part == 0 ? sandboxd::api::SplitHunk(units[at].text) : std::vector<std::string>{};
        if (parts.size() <= 1) {
          Say("Sorry, cannot split this hunk\n");
          break;
        }
        const Unit whole = units[at];
        std::vector<Unit> split;
        for (size_t p = 1; p <= parts.size(); ++p) split.push_back({whole.hunk, p, parts[p - 1], false});
        units.erase(units.begin() + static_cast<long>(at));
        units.insert(units.begin() + static_cast<long>(at), split.begin(), split.end());
        change.parts[whole.hunk].assign(parts.size(), change.verdicts[whole.hunk - 1]);
        Say("Split into " + std::to_string(parts.size()) + " hunks: " + whole.Number() + ".1 to " + whole.Number() + "." +
            std::to_string(parts.size()) + "\n");
        shown = false;
        break;
      }
      case Answer::kQuit: return false;
    }
    if (next != at) shown = false;
    at = next;
  }
  return true;
}

bool Review::AskAboutRepository(const std::string& line, const std::vector<size_t>& members) {
  Say(line + "\n");
  Say("(a repository's data is decided whole: its objects, refs and index land together or not at all; "
      "changes --git lists its files)\n");
  // Its own files by name, not the .git directory: what git obeys there (config, hooks) is
  // asked about as the file it is.
  auto decide = [&](Verdict verdict) {
    std::vector<sandboxd::api::Selector> selectors;
    for (size_t i : members) selectors.push_back({changes_[i].path, std::nullopt, 0});
    SendDecision(sandbox_, verdict, selectors);
    for (size_t i : members) changes_[i].verdicts.assign(changes_[i].verdicts.size(), verdict);
  };
  return AskWhole("Approve this repository's data [y,n,q,j,?]? ", "Sorry, cannot split a repository's data\n", decide);
}

bool Review::AskWhole(const std::string& prompt, const char* cannot_split, const std::function<void(Verdict)>& decide) {
  for (;;) {
    switch (Ask(prompt, kChangeHelp)) {
      case Answer::kApprove:
      case Answer::kApproveRest: decide(Verdict::kApproved); return true;
      case Answer::kReject:
      case Answer::kRejectRest: decide(Verdict::kRejected); return true;
      case Answer::kNextUndecided:
      case Answer::kNext: return true;
      case Answer::kQuit: return false;
      case Answer::kPreviousUndecided:
      case Answer::kPrevious: Say("No previous hunk\n"); break;
      case Answer::kSplit: Say(cannot_split); break;
    }
  }
}

bool Review::AskAboutWhole(ReviewedChange& change, const std::vector<FileSection>& sections) {
  for (const auto& section : sections) {
    Show(section.header);
    for (const auto& hunk : section.hunks) Show(hunk);
  }
  size_t beneath = 0;
  for (const auto& other : changes_) beneath += &other != &change && AtOrBeneath(other.path, change.path);
  if (beneath > 0)
    Say("(deciding " + Quote(change.path) + " decides the " + std::to_string(beneath) +
        (beneath == 1 ? " change" : " changes") + " beneath it too; each is asked about after it)\n");
  if (change.verdicts.size() == 1) SayIfDecided(change.verdicts.front());
  return AskWhole("Approve this change [y,n,q,j,?]? ", "Sorry, cannot split this change\n",
                  [&](Verdict verdict) { DecideWhole(change.path, verdict); });
}

Answer Review::Ask(const std::string& prompt, const char* help) {
  for (;;) {
    Say(prompt);
    auto key = keys_.Next();
    if (!key || *key == '\x04') {  // end of input, Ctrl-D or a signal
      Say("\n");
      return Answer::kQuit;
    }
    if (*key == '\x1b') tcflush(STDIN_FILENO, TCIFLUSH);  // the rest of an arrow key's sequence
    // Echo the key as `git add -p` does, so that the screen shows what was answered.
    Say(std::string(isprint(static_cast<unsigned char>(*key)) ? 1 : 0, *key) + "\n");
    switch (*key) {
      case 'y': return Answer::kApprove;
      case 'n': return Answer::kReject;
      case 'a': return Answer::kApproveRest;
      case 'd': return Answer::kRejectRest;
      case 'j': return Answer::kNextUndecided;
      case 'J': return Answer::kNext;
      case 'k': return Answer::kPreviousUndecided;
      case 'K': return Answer::kPrevious;
      case 's': return Answer::kSplit;
      case 'q': return Answer::kQuit;
      case '\n': case '\r': case ' ': case '\x1b': continue;
      default: Say(help);
    }
  }
}

void Review::DecideUnits(ReviewedChange& change, std::vector<Unit>& units, size_t first, size_t end, Verdict verdict) {
  // Structured, never "PATH:N": a job may have named a file beside this one "PATH:N".
  std::vector<sandboxd::api::Selector> selectors;
  for (size_t u = first; u < end; ++u)
    selectors.push_back({change.path, static_cast<int>(units[u].hunk), static_cast<int>(units[u].part)});
  try {
    SendDecision(sandbox_, verdict, selectors);
  } catch (const sdbus::Error& e) {
    // Should the daemon not split a file that shows a single hunk, that hunk is the whole change.
    if (change.verdicts.size() != 1 || units.size() != 1 || e.getName() != std::string(sandboxd::api::kErrorPrefix) + "InvalidArgument")
      throw;
    SendDecision(sandbox_, verdict, {sandboxd::api::Selector{change.path}});
  }
  for (size_t u = first; u < end; ++u) {
    Unit& unit = units[u];
    unit.decided = true;
    if (unit.part == 0) {
      change.verdicts[unit.hunk - 1] = verdict;
      continue;
    }
    auto& parts = change.parts[unit.hunk];
    parts[unit.part - 1] = verdict;
    // Parts that all agree are their hunk's decision, as the daemon keeps them.
    bool same = true;
    for (Verdict each : parts) same &= each == parts.front();
    change.verdicts[unit.hunk - 1] = same ? parts.front() : Verdict::kPending;
  }
}

Verdict Review::VerdictOf(const ReviewedChange& change, const Unit& unit) {
  if (unit.part == 0) return change.verdicts[unit.hunk - 1];
  return change.parts.at(unit.hunk)[unit.part - 1];
}

void Review::DecideWhole(const std::string& path, Verdict verdict) {
  SendDecision(sandbox_, verdict, {sandboxd::api::Selector{path}});
  // PATH names every change beneath a directory too: the daemon decided those as well.
  for (auto& other : changes_)
    if (AtOrBeneath(other.path, path) || (!other.renamed_to.empty() && AtOrBeneath(other.renamed_to, path)))
      other.verdicts.assign(other.verdicts.size(), verdict);  // and the daemon decides a rename's halves together
}

void Review::Show(const std::string& diff) {
  diff_->Write(diff.data(), diff.size());
  diff_->Finish();  // flushes; there is no pager to wait for
}

void Review::Say(const std::string& text) { std::cout << text << std::flush; }

void Review::SayIfDecided(Verdict verdict) {
  if (verdict != Verdict::kPending) Say(verdict == Verdict::kApproved ? "(already approved)\n" : "(already rejected)\n");
}

}  // namespace

ReviewOutcome ReviewOnTerminal(Context& ctx, const std::string& sandbox, bool on_stderr) {
  if (!isatty(STDIN_FILENO))
    throw UsageError{"review asks on a terminal; without one, decide with `sandboxctl approve` and `sandboxctl reject`"};
  std::optional<StdoutOntoStderr> onto_stderr;
  if (on_stderr) onto_stderr.emplace();
  ReviewOutcome outcome = Review(ctx, sandbox).Run();  // the terminal is itself again from here on
  if (outcome.signal) std::cout << "Interrupted; the decisions made so far stay.\n";
  std::cout << outcome.approved << " approved, " << outcome.rejected << " rejected, " << outcome.pending << " left pending.\n"
            << std::flush;
  return outcome;
}

int VerbReview(Context& ctx, const std::string& sandbox) {
  ReviewOutcome outcome = ReviewOnTerminal(ctx, sandbox, false);
  if (outcome.approved > 0) std::cout << "Write the approved ones into the live tree with `sandboxctl commit " << sandbox << "`.\n";
  return outcome.signal ? 128 + outcome.signal : 0;
}

}  // namespace sandboxctl
