// `sandboxctl try`: the one-shot cycle. Create a sandbox over the current directory (or each
// --root), run the command in it as `run` does, summarise the changes, then review, commit,
// discard or keep them, and destroy the sandbox unless it is kept. Whatever the command
// produced is never lost without being asked for: a refused commit keeps the sandbox and says
// where it is.

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include "object_paths.h"
#include "proxies.h"
#include "verbs.h"

namespace sandboxctl {
namespace {

enum class Fate { kCommit, kDiscard, kKeep, kReview };

/// What `verb` prints on std::cout, taken instead of printed: our stdout belongs to the command
/// (and to the id of a kept sandbox). So `try` reuses `create` and `changes` as they are.
std::string StdoutOf(const std::function<int()>& verb) {
  std::ostringstream captured;
  std::streambuf* ours = std::cout.rdbuf(captured.rdbuf());
  try {
    verb();
  } catch (...) {
    std::cout.rdbuf(ours);
    throw;
  }
  std::cout.rdbuf(ours);
  return captured.str();
}

/// A nameless sandbox over `dirs` (the current directory when none), made by `create` and
/// marked as try's; its id.
std::string Create(Context& ctx, const std::vector<std::string>& dirs) {
  CreateArgs create;
  create.dirs = dirs.empty() ? std::vector<std::string>{"."} : dirs;
  create.made_by_try = true;
  std::string id = StdoutOf([&] { return VerbCreate(ctx, create); });
  while (!id.empty() && id.back() == '\n') id.pop_back();
  return id;
}

/// The change set as `changes` prints it, on stderr; false when there is none.
bool PrintSummary(Context& ctx, const std::string& id) {
  std::string lines = StdoutOf([&] { return VerbChanges(ctx, id); });
  std::cerr << (lines.empty() ? "no changes\n" : lines);
  return !lines.empty();
}

void IgnoreInterruption(int) {}

/// Once the sandbox exists, SIGINT, SIGTERM and SIGHUP must not end sandboxctl, which would leave
/// the sandbox behind unnamed. While the job runs they cancel it (RunWithOurStreams); after it
/// they only interrupt the question, which then keeps the sandbox (no SA_RESTART, so that read()
/// sees EINTR). A Ctrl-C at a password prompt still ends pkttyagent, so the commit is refused.
void InterruptInsteadOfDying() {
  struct sigaction action {};
  action.sa_handler = IgnoreInterruption;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal_number, &action, nullptr);
}

/// One line from the terminal; nothing at end of input or when interrupted.
std::optional<std::string> ReadAnswer() {
  std::string line;
  char c;
  for (;;) {
    ssize_t got = read(STDIN_FILENO, &c, 1);
    if (got <= 0) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
}

/// `can_discard`: the sandbox is try's own (one named with --sandbox is never discarded).
Fate Ask(bool can_discard) {
  // Keys typed while the command ran were meant for it, not an answer to a question not yet asked.
  tcflush(STDIN_FILENO, TCIFLUSH);
  for (;;) {
    std::cerr << (can_discard ? "[r]eview, [c]ommit all, [d]iscard, [k]eep? " : "[r]eview, [c]ommit all, [k]eep? ") << std::flush;
    auto answer = ReadAnswer();
    if (!answer) {
      std::cerr << "\n";
      return Fate::kKeep;
    }
    std::string letter;
    for (char c : *answer)
      if (!isspace(static_cast<unsigned char>(c))) letter += static_cast<char>(tolower(static_cast<unsigned char>(c)));
    if (letter == "r") return Fate::kReview;
    if (letter == "c") return Fate::kCommit;
    if (letter == "d" && can_discard) return Fate::kDiscard;
    if (letter == "k") return Fate::kKeep;
  }
}

/// A yes-or-no question on the terminal; no unless answered yes.
bool Confirm(const std::string& question) {
  tcflush(STDIN_FILENO, TCIFLUSH);
  std::cerr << question << " [y/N] " << std::flush;
  auto answer = ReadAnswer();
  if (!answer) std::cerr << "\n";
  return answer && !answer->empty() && tolower(static_cast<unsigned char>(answer->front())) == 'y';
}

Fate Decide(const TryArgs& args, const JobEnd& job, bool changed) {
  if (args.keep) return Fate::kKeep;
  if (args.commit) {
    if (job.reason == "cancelled") {
      // Ctrl-C stopped the command half-way: what it left is not what -y agreed to.
      std::cerr << "The command was cancelled; its changes are not committed without asking.\n";
    } else if (job.exit_status != 0) {
      // -y agreed to the changes of a command that works: a failed one's are kept to look at
      // (and a failed one that changed nothing leaves nothing to keep).
      if (!changed) return Fate::kDiscard;
      std::cerr << "The command failed (status " << job.exit_status << "); its changes are kept, not committed.\n";
      return Fate::kKeep;
    } else {
      return Fate::kCommit;
    }
  }
  return isatty(STDIN_FILENO) ? Ask(args.run.sandbox.empty()) : Fate::kKeep;
}

/// [r]eview: decide change by change, then commit what was approved unless a signal cut the
/// review short. The sandbox stays while anything is left in it (pending or rejected); else it
/// goes as after a discard, having nothing left to discard.
Fate ReviewThenCommit(Context& ctx, const std::string& id) {
  ReviewOutcome review = ReviewOnTerminal(ctx, id, true);
  if (review.signal == 0 && review.approved > 0) VerbCommit(ctx, id, false);
  if (review.signal != 0 || review.pending > 0) return Fate::kKeep;
  // Only what was rejected is left: the sandbox may go with it, if so wished.
  if (review.rejected > 0 && !Confirm("Drop the " + std::to_string(review.rejected) + " rejected change(s) with the sandbox?"))
    return Fate::kKeep;
  return Fate::kDiscard;
}

void PrintKept(const std::string& id) {
  std::cout << id << std::endl;
  std::cerr << "Kept sandbox " << id << ": review it with `sandboxctl changes " << id << "` and `sandboxctl diff " << id
            << "`, then `sandboxctl commit " << id << " --all` or `sandboxctl destroy " << id << "`.\n";
}

/// A sandbox of the caller's whose roots overlap the directories try was asked for.
struct Covering {
  std::string id, name;
  std::vector<std::string> roots;
  bool kept_by_try = false;  ///< try made it, over exactly these directories
};

/// The caller's sandboxes whose roots overlap `dirs` (the current directory when none), the one
/// an earlier try kept over exactly them first.
std::vector<Covering> CoveringSandboxes(Context& ctx, const std::vector<std::string>& dirs) {
  auto inside = [](const std::string& in, const std::string& out) {
    return in == out || (in.size() > out.size() && in.compare(0, out.size(), out) == 0 && (out == "/" || in[out.size()] == '/'));
  };
  std::vector<std::string> wanted;
  for (const auto& dir : dirs.empty() ? std::vector<std::string>{"."} : dirs)
    if (char* real = realpath(dir.c_str(), nullptr)) {
      wanted.emplace_back(real);
      free(real);
    }
  std::sort(wanted.begin(), wanted.end());
  std::vector<Covering> covering;
  for (const auto& entry : ManagerProxy(ctx.Bus()).ListSandboxes()) {
    if (entry.get<2>() != getuid()) continue;
    const auto& roots = entry.get<4>();
    bool overlaps = false;
    for (const auto& root : roots)
      for (const auto& dir : wanted) overlaps |= inside(root, dir) || inside(dir, root);
    if (!overlaps) continue;
    Covering found{entry.get<0>(), entry.get<1>(), roots, false};
    std::vector<std::string> sorted = roots;
    std::sort(sorted.begin(), sorted.end());
    if (sorted == wanted) {
      auto info = SandboxProxy(ctx.Bus(), sandboxd::api::SandboxPath(found.id)).GetInfo();
      found.kept_by_try = info.count("made_by_try") > 0 && info["made_by_try"].get<bool>();
    }
    covering.push_back(std::move(found));
  }
  std::stable_partition(covering.begin(), covering.end(), [](const Covering& c) { return c.kept_by_try; });
  return covering;
}

/// A new sandbox over `dirs`. Where one covers them already: a sandbox an earlier try kept over
/// exactly them may be reused or dropped (on a terminal; without one the refusal says both
/// ways); any other is named in a refusal that says how to run in it, and is never touched.
std::string CreateOrReuse(Context& ctx, const std::vector<std::string>& dirs) {
  try {
    return Create(ctx, dirs);
  } catch (const sdbus::Error& e) {
    if (e.getName() != "org.sandboxd.Sandbox1.Error.Overlap") throw;
    std::vector<Covering> covering = CoveringSandboxes(ctx, dirs);
    if (covering.empty()) throw;  // another user's shared sandbox: the daemon's words say it
    const Covering& found = covering.front();
    std::string where = dirs.empty() ? "this directory" : "these directories";
    std::string named = found.name == found.id ? found.id : found.name + " (" + found.id + ")";
    if (!found.kept_by_try) {
      std::string roots;
      for (const auto& root : found.roots) roots += (roots.empty() ? "" : ", ") + root;
      throw std::runtime_error("your sandbox " + named + " covers " + where + " already (its roots: " + roots +
                               "): run the command in it with `sandboxctl run " + found.name + " -- CMD`, or give try --sandbox " + found.name);
    }
    if (!isatty(STDIN_FILENO))
      throw std::runtime_error("the sandbox " + found.id + " that an earlier try kept covers " + where + " already: reuse it (sandboxctl try --sandbox " +
                               found.id + " -- CMD) or drop it (sandboxctl destroy " + found.id + ")");
    tcflush(STDIN_FILENO, TCIFLUSH);
    for (;;) {
      std::cerr << "The sandbox " << found.id << " an earlier try kept covers " << where
                << " already. [r]euse it, [d]rop it and start afresh, [q]uit? " << std::flush;
      auto answer = ReadAnswer();
      char letter = answer && !answer->empty() ? static_cast<char>(tolower(static_cast<unsigned char>(answer->front()))) : 'q';
      if (letter == 'r') return found.id;
      if (letter == 'd') {
        VerbDestroy(ctx, found.id);
        return Create(ctx, dirs);
      }
      if (letter == 'q') throw std::runtime_error("sandbox " + found.id + " kept as it was; nothing was run");
    }
  }
}

/// After an error the sandbox goes, yet a failure to destroy it must not hide the first error.
void DestroyAfterError(Context& ctx, const std::string& id) noexcept {
  try {
    VerbDestroy(ctx, id);
  } catch (const sdbus::Error& e) {
    std::cerr << "sandboxctl: sandbox " << id << " could not be destroyed: " << e.getMessage() << "\n";
  }
}

}  // namespace

int VerbTry(Context& ctx, const TryArgs& args) {
  if (args.commit && args.keep) throw UsageError{"-y and -n exclude each other"};
  if (args.command.empty()) throw UsageError{"try needs a command: try [--root DIR]... [-y | -n] -- CMD [ARG...]"};
  const bool named = !args.run.sandbox.empty();
  if (named && !args.roots.empty()) throw UsageError{"--sandbox and --root exclude each other: the sandbox has its roots"};
  // Bad usage is told before anything is made.
  auto options = JobRunOptions(args.run);
  ctx.json = false;  // what try prints is for a person, and a kept sandbox's id is alone on stdout anyway
  // In the current directory, always (or --cwd): a sandbox that does not hold it refuses the
  // job, naming it. Only over --root directories elsewhere does the job start in the first.
  std::string cwd = args.run.cwd.empty() ? "" : Absolute(args.run.cwd);
  if (cwd.empty()) {
    char here[PATH_MAX];
    if (getcwd(here, sizeof here)) cwd = here;
    if (!args.roots.empty()) options["cwd_fallback"] = sdbus::Variant(true);
  }
  std::string path = named ? ctx.ResolveSandbox(args.run.sandbox) : "";
  std::string id = named ? path.substr(path.rfind('/') + 1) : CreateOrReuse(ctx, args.roots);
  path = sandboxd::api::SandboxPath(id);
  // A sandbox try did not make is never discarded nor destroyed by it: it stays, whatever the
  // command left, for its owner to decide.
  auto settle_named = [&](Fate fate) {
    if (fate != Fate::kCommit) std::cerr << "What the command changed stays in sandbox " << args.run.sandbox << ".\n";
  };
  InterruptInsteadOfDying();
  Fate fate = Fate::kDiscard;
  JobEnd job;
  try {
    job = RunWithOurStreams(ctx, path, args.command, cwd, JobEnvironment(args.run.env), options);
    bool changed = PrintSummary(ctx, id);
    fate = Decide(args, job, changed);
    // Nothing to commit needs no commit, and no polkit check either: the sandbox simply goes.
    if (!changed && fate == Fate::kCommit) fate = Fate::kDiscard;
    try {
      if (fate == Fate::kReview && named) {
        // What was approved goes live; the rest stays in the named sandbox, which try keeps.
        ReviewOutcome review = ReviewOnTerminal(ctx, id, true);
        if (review.signal == 0 && review.approved > 0) VerbCommit(ctx, id, false);
        fate = Fate::kKeep;
      }
      if (fate == Fate::kReview) fate = ReviewThenCommit(ctx, id);
      if (fate == Fate::kCommit) VerbCommit(ctx, id, true);
    } catch (const sdbus::Error& e) {
      // Refused (polkit, a conflict) or failed: the live tree is as it was, so what the command
      // made is kept, and try still ends with the command's own status, as documented.
      std::cerr << "sandboxctl: the commit was refused: " << e.getMessage() << "\n";
      fate = Fate::kKeep;
    }
  } catch (...) {
    if (fate != Fate::kKeep && !named) DestroyAfterError(ctx, id);
    throw;
  }
  if (named)
    settle_named(fate);
  else if (fate == Fate::kKeep)
    PrintKept(id);
  else
    VerbDestroy(ctx, id);
  return job.exit_status;
}

}  // namespace sandboxctl
