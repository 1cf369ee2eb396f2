// sandboxctl: the command-line client of sandboxd. A table of verbs over CLI11 subcommands;
// D-Bus errors become one line on stderr and exit status 1, usage errors exit status 2, and
// `run` exits with the job's own status.

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>

#include "command_start.h"
#include "config.h"
#include "file_helper.h"
#include "quote_path.h"
#include "verbs.h"

namespace {

using sandboxctl::Context;

struct Verb {
  CLI::App* command;
  std::function<int(Context&)> run;
};

}  // namespace

namespace {

/// CLI11's help, without the value a flag takes when given alone ("--json{pretty}" is shown as
/// "--json"): the option's own text says what it takes.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(option, is_positional);
    for (size_t open; (open = name.find('{')) != std::string::npos;) {
      size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }
};

}  // namespace

int main(int argc, char** argv) {
  // Inside a job of `sandboxctl mcp`'s file tools: not the CLI (file_helper.h).
  if (argc >= 2 && std::string_view(argv[1]) == sandboxctl::file_helper::kArgument) return sandboxctl::file_helper::Main(argc, argv);
  Context ctx;
  CLI::App app{"sandboxctl — control sandboxd's copy-on-write sandboxes", "sandboxctl"};
  app.formatter(std::make_shared<HelpFormatter>());
  app.require_subcommand(1);
  app.fallthrough();
  app.add_flag("--user", ctx.user_mode, "Talk to the session-bus sandboxd of this user");
  // --json alone means --json=pretty; any other value is refused.
  std::string json_style;
  app.add_flag("--json{pretty}", json_style, "Print list, show, changes, jobs, usage and gc as JSON: indented, or with =short on one line")
      ->check(CLI::Validator(
          [](std::string& style) {
            return style == "pretty" || style == "short" ? std::string() : "takes pretty or short, not '" + style + "'";
          },
          "pretty|short"))
      ->option_text("[=pretty|short]");
  app.add_flag("--no-ask-password", ctx.no_ask_password, "Do not let polkit ask for a password");
  app.add_flag("--no-pager", ctx.no_pager, "Do not pipe diff's output through a pager");
  app.set_version_flag("--version", SANDBOXD_VERSION);

  std::vector<Verb> verbs;
  std::string sandbox;
  std::vector<std::string> selectors;
  bool all = false;
  bool force = false;
  // --include / --exclude GLOB of the verbs about changes: changes, diff, approve, reject, commit.
  std::vector<std::string> includes;
  std::vector<std::string> excludes;
  auto add_patterns = [&](CLI::App* verb) {
    verb->add_option("--include", includes, "Only changes whose path matches GLOB (repeatable)")->type_name("GLOB")->allow_extra_args(false);
    verb->add_option("--exclude", excludes, "Leave out changes whose path matches GLOB (repeatable)")->type_name("GLOB")->allow_extra_args(false);
  };
  auto patterns = [&] { return sandboxctl::PathPatterns(includes, excludes); };

  sandboxctl::CreateArgs create;
  auto* c = app.add_subcommand("create", "Create a sandbox over DIR... and print its id");
  c->add_option("--name", create.name, "A name to use instead of the id")->type_name("NAME");
  c->add_flag("--scratch-home", create.scratch_home, "Let its jobs write your home: what they write there stays in the sandbox, never a change");
  c->add_flag("--network", create.network, "Every job of the sandbox has the network (polkit asks once, now)");
  c->add_flag("--shared", create.shared, "Let other --shared sandboxes overlay the same directories (their commits are conflicts here)");
  c->add_option("--quota", create.quota, "Limit the sandbox's changes to SIZE (e.g. 500M, 10G): a write past it fails as on a full disk, or where sandboxd cannot limit hard the job is stopped")->type_name("SIZE");
  c->add_option("--ttl", create.ttl, "Remove the sandbox once it has been idle this long (e.g. 12h, 7d)")->type_name("DUR");
  c->add_option("--hide", create.hide, "Make PATH empty and unreadable in every job of the sandbox (repeatable)")->type_name("PATH")
      ->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--allow-socket", create.allow_sockets, "Let every job of the sandbox connect to the host's unix socket PATH (repeatable)")
      ->type_name("PATH")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--allow-host", create.allow_hosts, "Let every job of the sandbox reach HOST[:PORT] by name and nothing else (443 and 80 without a port; *.SUFFIX: its subdomains; comma-separated, repeatable; polkit asks unless the administrator allows them)")
      ->type_name("HOST[:PORT]")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("dirs", create.dirs, "Directories to sandbox")->required();
  verbs.push_back({c, [&](Context& x) { return sandboxctl::VerbCreate(x, create); }});

  auto* l = app.add_subcommand("list", "List your sandboxes");
  verbs.push_back({l, [&](Context& x) { return sandboxctl::VerbList(x); }});

  auto* s = app.add_subcommand("show", "Show one sandbox");
  s->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  verbs.push_back({s, [&](Context& x) { return sandboxctl::VerbShow(x, sandbox); }});

  sandboxctl::RunArgs run;
  auto* r = app.add_subcommand("run", "Run a command in a sandbox: run [OPTION...] SANDBOX CMD [ARG...]");
  // run's options, which try takes too.
  auto add_job_options = [](CLI::App* verb, sandboxctl::RunArgs& job) {
    verb->add_option("--cwd", job.cwd, "Working directory (inside a root)")->type_name("DIR");
    verb->add_option("--env", job.env, "Set NAME=VALUE in the job's environment (repeatable)")->type_name("NAME=VALUE")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    verb->add_option("--timeout", job.timeout, "Kill the job after this long (seconds, or 90s, 5m, 2h, 1d)")->type_name("DUR");
    verb->add_flag("--network", job.network, "Give the job the network (polkit asks)");
    verb->add_option("--allow-host", job.allow_hosts, "Let the job reach HOST[:PORT] by name and nothing else (443 and 80 without a port; *.SUFFIX: its subdomains; comma-separated, repeatable; polkit asks unless the sandbox or the administrator allows them)")
        ->type_name("HOST[:PORT]")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    verb->add_flag("--no-live-feed", job.no_live_feed, "Announce nothing of what the job changes while it runs (ChangesSeen)");
    verb->add_option("--hide", job.hide, "Make PATH empty and unreadable in the job (repeatable)")->type_name("PATH")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    verb->add_option("--allow-socket", job.allow_sockets, "Let the job connect to the host's unix socket PATH (repeatable)")->type_name("PATH")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    verb->add_option("--memory-max", job.memory_max, "Kill the job when it uses more memory (and swap) than SIZE (e.g. 512M, 2G)")->type_name("SIZE");
    verb->add_option("--tasks-max", job.tasks_max, "Let the job have at most N processes and threads at once")->type_name("N");
  };
  add_job_options(r, run);
  r->add_flag("-d,--detach", run.detach, "Print the job's id and return at once; sandboxctl logs JOB shows its output");
  r->add_option("sandbox", run.sandbox, "Sandbox id or name")->required();
  r->add_option("command", run.command, "Command and arguments: everything from its first word on");
  verbs.push_back({r, [&](Context& x) { return sandboxctl::VerbRun(x, run); }});

  sandboxctl::ShellArgs shell;
  auto* sh = app.add_subcommand("shell", "An interactive shell in a sandbox, on a terminal of its own: shell SANDBOX [CMD ARG...]");
  sh->add_option("sandbox", shell.sandbox, "Sandbox id or name")->required();
  sh->add_option("command", shell.command, "Command instead of your login shell: everything from its first word on");
  verbs.push_back({sh, [&](Context& x) { return sandboxctl::VerbShell(x, shell); }});

  auto* ch = app.add_subcommand("changes", "List the changes a sandbox holds");
  ch->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  bool ignored = false;
  ch->add_flag("--ignored", ignored, "List the paths git ignores too, instead of one counted line");
  bool git_files = false;
  ch->add_flag("--git", git_files, "List a repository's own data beneath .git as files, instead of one line per repository");
  add_patterns(ch);
  verbs.push_back({ch, [&](Context& x) {
                     x.show_ignored = ignored;
                     x.show_git_files = git_files;
                     return sandboxctl::VerbChanges(x, sandbox, patterns());
                   }});

  auto* d = app.add_subcommand("diff", "Show the changes as git-style diffs");
  d->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  d->add_option("selectors", selectors, "PATH or PATH:N to narrow the diff");
  bool stat = false, name_only = false;
  d->add_flag("--stat", stat, "Per file, how many lines it adds and removes, as git diff --stat");
  d->add_flag("--name-only", name_only, "Only the names of the changed files");
  bool binary_patches = false;
  d->add_flag("--binary", binary_patches, "Binary changes as git's binary patches, which git apply --binary takes");
  d->add_flag("--ignored", ignored, "Show the paths git ignores too");
  bool diff_git_files = false;
  d->add_flag("--git", diff_git_files, "Show a repository's own data beneath .git too");
  add_patterns(d);
  verbs.push_back({d, [&](Context& x) {
                     x.show_ignored = ignored;
                     x.show_git_files = diff_git_files;
                     if (stat && name_only) throw sandboxctl::UsageError{"--stat and --name-only exclude each other"};
                     auto form = stat ? sandboxctl::DiffForm::kStat : name_only ? sandboxctl::DiffForm::kNameOnly : sandboxctl::DiffForm::kPatch;
                     return sandboxctl::VerbDiff(x, sandbox, selectors, patterns(), form, binary_patches);
                   }});

  auto* cm = app.add_subcommand("commit", "Write approved changes into the live directories");
  cm->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  cm->add_option("selectors", selectors, "Commit only the approved changes at these paths");
  cm->add_flag("--all", all, "Approve every pending change first");
  cm->add_flag("--force", force, "Commit even where the live tree changed since the sandbox last agreed with it");
  add_patterns(cm);
  verbs.push_back({cm, [&](Context& x) { return sandboxctl::VerbCommit(x, sandbox, all, force, selectors, patterns()); }});

  std::string decision_note;
  for (bool approve : {true, false}) {
    auto* v = app.add_subcommand(approve ? "approve" : "reject",
                                 approve ? "Approve changes or hunks for the next commit: approve SANDBOX (SELECTOR... | --all)"
                                         : "Reject changes or hunks (they stay in the sandbox): reject SANDBOX (SELECTOR... | --all)");
    v->add_option("sandbox", sandbox, "Sandbox id or name")->required();
    v->add_option("selectors", selectors, "PATH (a change, or every change beneath a directory) or PATH:N (hunk N)");
    v->add_flag("--all", all, approve ? "Approve every change" : "Reject every change");
    v->add_option("--note", decision_note, "A note kept with the decision, for whoever made the changes (an agent's review_status)")
        ->type_name("TEXT");
    add_patterns(v);
    verbs.push_back({v, [&, approve, v](Context& x) {
                       std::optional<std::string> note;
                       if (v->count("--note") > 0) note = decision_note;
                       return sandboxctl::VerbDecide(x, sandbox, selectors, all, approve, patterns(), note);
                     }});
  }

  auto* rv = app.add_subcommand("review", "Approve or reject each change or hunk on the terminal, in the manner of git add -p");
  rv->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  rv->add_flag("--ignored", ignored, "Go through the paths git ignores too");
  bool review_git_files = false;
  rv->add_flag("--git", review_git_files, "Go through a repository's own data beneath .git file by file");
  verbs.push_back({rv, [&](Context& x) {
                     x.show_ignored = ignored;
                     x.show_git_files = review_git_files;
                     return sandboxctl::VerbReview(x, sandbox);
                   }});

  auto* un = app.add_subcommand("undo", "Take the last commit back: the live directories as before it, its changes back in the sandbox");
  un->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  verbs.push_back({un, [&](Context& x) { return sandboxctl::VerbUndo(x, sandbox); }});

  bool cancel_jobs = false;
  auto* dc = app.add_subcommand("discard", "Throw every change of a sandbox away");
  dc->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  dc->add_flag("--cancel-jobs", cancel_jobs, "Cancel the sandbox's running jobs first");
  verbs.push_back({dc, [&](Context& x) { return sandboxctl::VerbDiscard(x, sandbox, cancel_jobs); }});

  auto* su = app.add_subcommand("suspend", "Archive a sandbox's changes and free its layers until resume");
  su->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  verbs.push_back({su, [&](Context& x) { return sandboxctl::VerbSuspend(x, sandbox); }});

  auto* re = app.add_subcommand("resume", "Bring a suspended sandbox back, its changes as they were");
  re->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  verbs.push_back({re, [&](Context& x) { return sandboxctl::VerbResume(x, sandbox); }});

  auto* ds = app.add_subcommand("destroy", "Remove a sandbox and its changes");
  ds->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  ds->add_flag("--cancel-jobs", cancel_jobs, "Cancel the sandbox's running jobs first");
  verbs.push_back({ds, [&](Context& x) { return sandboxctl::VerbDestroy(x, sandbox, cancel_jobs); }});

  auto* jb = app.add_subcommand("jobs", "List the jobs of a sandbox (or of all yours): running ones and the latest finished");
  jb->add_option("sandbox", sandbox, "Sandbox id or name (default: every sandbox of yours)");
  verbs.push_back({jb, [&](Context& x) { return sandboxctl::VerbJobs(x, sandbox); }});

  std::string job_id;
  bool follow = false;
  auto* lg = app.add_subcommand("logs", "Print a job's captured output (-f: follow it until the job ends)");
  lg->add_option("job", job_id, "Job id (sandboxctl jobs lists them)")->required();
  lg->add_flag("-f,--follow", follow, "Keep printing what the job writes until it ends");
  verbs.push_back({lg, [&](Context& x) { return sandboxctl::VerbLogs(x, job_id, follow); }});

  auto* cn = app.add_subcommand("cancel", "Cancel a running job: its whole process tree is killed");
  cn->add_option("job", job_id, "Job id (sandboxctl jobs lists them)")->required();
  verbs.push_back({cn, [&](Context& x) { return sandboxctl::VerbCancel(x, job_id); }});

  bool verbose_log = false;
  auto* lgc = app.add_subcommand("log", "List a sandbox's commits, numbered from 1 within it (-v: with their paths)");
  lgc->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  lgc->add_flag("-v,--verbose", verbose_log, "List the paths each commit moved live");
  verbs.push_back({lgc, [&](Context& x) { return sandboxctl::VerbLog(x, sandbox, verbose_log); }});

  auto* wt = app.add_subcommand("watch", "Follow a sandbox's changes as its jobs make them, a line per path (Ctrl-C ends)");
  wt->add_option("sandbox", sandbox, "Sandbox id or name")->required();
  verbs.push_back({wt, [&](Context& x) { return sandboxctl::VerbWatch(x, sandbox); }});

  auto* gc = app.add_subcommand("gc", "Remove expired sandboxes and, over the storage cap, the largest suspended ones (polkit asks)");
  verbs.push_back({gc, [&](Context& x) { return sandboxctl::VerbGc(x); }});

  bool usage_all = false;
  auto* us = app.add_subcommand("usage", "What your sandboxes cost on disk (--all: everyone's, polkit asks)");
  us->add_flag("--all", usage_all, "Every user's sandboxes (org.sandboxd.sandbox1.manage)");
  verbs.push_back({us, [&](Context& x) { return sandboxctl::VerbUsage(x, usage_all); }});

  sandboxctl::TryArgs attempt;
  auto* mc = app.add_subcommand("mcp", "A Model Context Protocol server on stdin and stdout, for agent hosts (e.g. claude mcp add sandboxd -- sandboxctl mcp)");
  verbs.push_back({mc, [&](Context& x) { return sandboxctl::VerbMcp(x); }});

  auto* t = app.add_subcommand("try", "Create, run, review, commit or discard, destroy: try [--root DIR]... [-y | -n] [OPTION...] CMD [ARG...]");
  t->add_option("--root", attempt.roots, "Directory to sandbox (repeatable; default: the current one)")->type_name("DIR")->allow_extra_args(false);
  t->add_option("--sandbox", attempt.run.sandbox, "Run in this sandbox of yours instead of a new one (never discarded nor destroyed)")->type_name("NAME");
  add_job_options(t, attempt.run);
  auto* yes = t->add_flag("-y,--yes", attempt.commit, "Commit every change without asking");
  t->add_flag("-n,--no", attempt.keep, "Keep the sandbox for later and print its id")->excludes(yes);
  t->add_option("command", attempt.command, "Command and arguments: everything from its first word on")->required();
  verbs.push_back({t, [&](Context& x) { return sandboxctl::VerbTry(x, attempt); }});

  // Everything from a command's first word is the command's (command_start.h).
  std::vector<std::string> args = sandboxctl::MarkCommandStart(app, {{"run", 1}, {"shell", 1}, {"try", 0}},
                                                               std::vector<std::string>(argv, argv + argc));
  // CLI11 takes its arguments back to front.
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A word where a verb goes that is none ("sandboxctl frobnicate") is named as such, not
    // reported as a missing verb. Global options take no separate value, so the first word
    // that is no option is the verb.
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].empty() || args[i][0] == '-') continue;
      auto named = app.get_subcommands([&](CLI::App* verb) { return verb->get_name() == args[i]; });
      if (named.empty()) {
        std::cerr << "sandboxctl: unknown verb " << sandboxd::api::EscapeControlBytes(args[i]) << " (sandboxctl --help lists them)\n";
        return 2;
      }
      break;
    }
    app.exit(e);
    return 2;
  }

  ctx.json = !json_style.empty();
  ctx.json_short = json_style == "short";
  for (auto& verb : verbs) {
    if (!verb.command->parsed()) continue;
    try {
      return verb.run(ctx);
    } catch (const sandboxctl::UsageError& e) {
      std::cerr << "sandboxctl: " << e.message << "\n";
      return 2;
    } catch (const sdbus::Error& e) {
      std::string message = e.getMessage();
      if (e.getName() == "org.freedesktop.DBus.Error.ServiceUnknown" || e.getName() == "org.freedesktop.DBus.Error.NameHasNoOwner")
        message = "sandboxd is not running (" + message + ")";
      // A message may hold a name a job chose: no byte of it may steer the terminal.
      std::cerr << "sandboxctl: " << sandboxd::api::EscapeControlBytes(ctx.NamedAsTyped(message.empty() ? e.getName() : message)) << "\n";
      return 1;
    } catch (const std::exception& e) {
      // Our own failures (no pseudo-terminal to be had, an answer that does not parse): one
      // line and status 1, never an abort.
      std::cerr << "sandboxctl: " << sandboxd::api::EscapeControlBytes(ctx.NamedAsTyped(e.what())) << "\n";
      return 1;
    }
  }
  return 2;
}
