#include "mcp_tools.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "change_list.h"
#include "git_fold.h"
#include "diff_summary.h"
#include "file_helper.h"
#include "object_paths.h"
#include "pipe_call.h"
#include "proxies.h"
#include "quote_path.h"
#include "refusal_note.h"
#include "selector.h"
#include "utf8.h"
#include "verbs.h"
#include "wire_selector.h"

namespace sandboxctl::mcp {
namespace {

using nlohmann::json;

json Schema(json properties, std::vector<std::string> required = {}) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}, {"additionalProperties", false}};
}

const json kSandboxArgument = {{"type", "string"}, {"description", "A sandbox's id or name; default: the one sandbox_open opened"}};
const json kPathArgument = {{"type", "string"}, {"description", "Relative to the sandbox's root (\"N/...\" for root N of a sandbox of several roots)"}};
const json kJobArgument = {{"type", "string"}, {"description", "A job's id, as run with background answered it"}};

/// A tool whose D-Bus call failed answers the daemon's error, named, as an error result.
using ToolCall = std::function<ToolResult(const json&, Cancellation&)>;

ToolCall Guarded(ToolCall call) {
  return [call = std::move(call)](const json& arguments, Cancellation& cancellation) -> ToolResult {
    try {
      return call(arguments, cancellation);
    } catch (const sdbus::Error& e) {
      return {e.getName() + ": " + e.getMessage(), nullptr, true};
    } catch (const UsageError& e) {
      return {e.message, nullptr, true};
    }
  };
}

std::string IdOf(const std::string& object_path) { return object_path.substr(object_path.rfind('/') + 1); }

std::string HowItEnded(int32_t exit_status, const std::string& reason) {
  if (reason == "exited") return "exited with status " + std::to_string(exit_status);
  if (reason == "timeout") return "ran out of time and was killed (status " + std::to_string(exit_status) + ")";
  if (reason == "cancelled") return "was cancelled (status " + std::to_string(exit_status) + ")";
  if (reason == "memory") return "went over its memory limit and was killed (status " + std::to_string(exit_status) + ")";
  if (reason == "quota") return "was stopped: the sandbox's changes grew over its quota (status " + std::to_string(exit_status) + ")";
  if (reason == "failed") return "could not be set up (status " + std::to_string(exit_status) + ")";
  return reason + " (status " + std::to_string(exit_status) + ")";
}

}  // namespace

std::string CheckSandboxPath(const std::string& path, const std::string& what) {
  if (path == ".") return path;
  auto refuse = [&](const std::string& why) { return ToolRefusal(what + " '" + path + "' " + why); };
  if (path.empty()) throw refuse("is empty; \".\" names the sandbox's root");
  if (path.front() == '/') throw refuse("is absolute; paths are relative to the sandbox's root");
  if (path.find('\0') != std::string::npos) throw refuse("holds a NUL byte");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") throw refuse("leads out of the sandbox's root with \"..\"");
    if (part.empty() || part == ".") throw refuse("has an empty or \".\" component");
    start = end + 1;
  }
  return path;
}

SandboxPlace PlaceOf(const std::vector<std::string>& roots, const std::string& path, const std::string& what) {
  CheckSandboxPath(path, what);
  if (roots.size() == 1) return {roots[0], path};
  // As changes and diff name them: "N/" before the path beneath root N.
  const size_t slash = path.find('/');
  const std::string index = path.substr(0, slash);
  const std::string beneath = slash == std::string::npos ? "." : path.substr(slash + 1);
  if (index.empty() || index.size() > 4 || index.find_first_not_of("0123456789") != std::string::npos || std::stoul(index) >= roots.size())
    throw ToolRefusal(what + " '" + path + "' names no root: this sandbox has " + std::to_string(roots.size()) +
                      " roots, and its paths begin with the root's index (0/ to " + std::to_string(roots.size() - 1) + "/)");
  return {roots[std::stoul(index)], beneath};
}

SandboxTools::SandboxTools(Context& ctx, std::string workdir) : ctx_(ctx), workdir_(std::move(workdir)) {}

std::vector<Tool> SandboxTools::Tools() {
  auto bind = [this](ToolResult (SandboxTools::*method)(const json&, Cancellation&)) {
    return Guarded([this, method](const json& arguments, Cancellation& cancellation) { return (this->*method)(arguments, cancellation); });
  };
  return {
      {"sandbox_open", "Open a sandbox",
       "Opens a copy-on-write sandbox over a directory: the one you already have over exactly that directory, else a new "
       "one. Every other tool acts on it. Nothing a job does there reaches the directory until its owner reviews and "
       "commits it; no tool commits.",
       Schema({{"path", {{"type", "string"}, {"description", "The directory; relative ones are taken from the server's working directory (the default)"}}},
               {"name", {{"type", "string"}, {"description", "A name for a new sandbox"}}},
               {"scratch_home", {{"type", "boolean"}, {"description", "A new sandbox's jobs may write your home (caches, tool state) into the sandbox, never a change"}}}}),
       false, bind(&SandboxTools::Open)},
      {"run", "Run a command in the sandbox",
       "Runs a command in the sandbox as you, without the network; what it writes stays in the sandbox. Answers its exit "
       "status and output (stdout and stderr together), cut past " + std::to_string(kRunOutputBytes >> 10) +
           " KiB; with background, answers a job id at once (job_output, job_cancel).",
       Schema({{"command", {{"type", "array"}, {"items", {{"type", "string"}}}, {"minItems", 1}, {"description", "The program and its arguments (no shell: use [\"sh\", \"-c\", \"...\"] for one)"}}},
               {"cwd", {{"type", "string"}, {"description", "Working directory relative to the sandbox's root; default: the root"}}},
               {"env", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}, {"description", "Environment variables to set"}}},
               {"timeout_seconds", {{"type", "integer"}, {"minimum", 1}, {"description", "Kill the job after this many seconds"}}},
               {"background", {{"type", "boolean"}, {"description", "Answer a job id at once instead of waiting"}}},
               {"sandbox", kSandboxArgument}},
              {"command"}),
       false, bind(&SandboxTools::Run)},
      {"job_output", "Read a job's output",
       "A job's captured output from a byte offset, and whether it still runs or how it ended.",
       Schema({{"job", kJobArgument},
               {"offset", {{"type", "integer"}, {"minimum", 0}, {"description", "Byte offset to read from; default 0"}}},
               {"max_bytes", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1 << 20}, {"description", "At most this many bytes; default 65536"}}}},
              {"job"}),
       true, bind(&SandboxTools::JobOutput)},
      {"job_cancel", "Cancel a job", "Kills a running job's whole process tree.", Schema({{"job", kJobArgument}}, {"job"}), false,
       bind(&SandboxTools::JobCancel)},
      {"changes", "List the sandbox's changes",
       "What the sandbox holds that its directory does not: one line per path, A added, M modified, D deleted, T type "
       "changed, P mode changed, with the owner's decision where there is one. What git keeps beneath a .git directory "
       "(objects, refs, logs, index) is one line per repository, \"git: 2 commits on main (1a2b3c4..5d6e7f8), index\": "
       "the owner approves and commits it whole.",
       Schema({{"sandbox", kSandboxArgument}}), true, bind(&SandboxTools::Changes)},
      {"diff", "Show the sandbox's changes as a diff",
       "A git-style diff of the sandbox's changes (or of those at the given paths), or per file the lines added and removed.",
       Schema({{"paths", {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "Paths as changes lists them; directories take what is beneath"}}},
               {"stat", {{"type", "boolean"}, {"description", "Per file, lines added and removed, as git diff --stat"}}},
               {"sandbox", kSandboxArgument}}),
       true, bind(&SandboxTools::Diff)},
      {"read_file", "Read a file in the sandbox",
       "A text file as the sandbox holds it (the user's file, or what jobs made of it), whole or lines offset to offset+limit-1, "
       "cut past " + std::to_string(file_helper::kReadBytes >> 10) + " KiB with a note.",
       Schema({{"path", kPathArgument},
               {"offset", {{"type", "integer"}, {"minimum", 1}, {"description", "The first line to read, from 1; default 1"}}},
               {"limit", {{"type", "integer"}, {"minimum", 1}, {"description", "How many lines to read; default: to the end"}}},
               {"sandbox", kSandboxArgument}},
              {"path"}),
       true, bind(&SandboxTools::ReadFile)},
      {"write_file", "Write a file in the sandbox",
       "Writes a whole file in the sandbox (never in the user's directory), making missing parent directories; an existing "
       "file keeps its permissions. At most " + std::to_string(file_helper::kWriteBytes >> 20) + " MiB. Never through a symlink.",
       Schema({{"path", kPathArgument}, {"content", {{"type", "string"}, {"description", "The file's whole new content"}}}, {"sandbox", kSandboxArgument}},
              {"path", "content"}),
       false, bind(&SandboxTools::WriteFile)},
      {"edit_file", "Edit a file in the sandbox",
       "Replaces old_text with new_text in a text file in the sandbox. old_text must occur exactly once in the file (whitespace "
       "and line ends included): include enough of the text around it.",
       Schema({{"path", kPathArgument},
               {"old_text", {{"type", "string"}, {"description", "The exact text to replace; it must occur once"}}},
               {"new_text", {{"type", "string"}, {"description", "What to put in its place"}}},
               {"sandbox", kSandboxArgument}},
              {"path", "old_text", "new_text"}),
       false, bind(&SandboxTools::EditFile)},
      {"list_dir", "List a directory in the sandbox",
       "The entries of a directory as the sandbox holds it: directories end in /, files show their size, symlinks their target.",
       Schema({{"path", {{"type", "string"}, {"description", "The directory, relative to the sandbox's root; default: the root"}}},
               {"sandbox", kSandboxArgument}}),
       true, bind(&SandboxTools::ListDir)},
      {"request_review", "Ask the owner to review",
       "Tells the sandbox's owner that you ask them to review its changes, with your message (what you did, what to look "
       "at): they see it and decide in their own time. You cannot approve or commit; review_status tells what they decided.",
       Schema({{"message", {{"type", "string"}, {"description", "What you did and what the owner should look at (at most 4096 bytes)"}}},
               {"sandbox", kSandboxArgument}},
              {"message"}),
       false, bind(&SandboxTools::RequestReview)},
      {"review_status", "The owner's decisions and notes",
       "What the owner decided about each change (approved, rejected, pending, or hunk by hunk), the notes they left with "
       "their decisions, their commits, and whether your review request still waits.",
       Schema({{"sandbox", kSandboxArgument}}), true, bind(&SandboxTools::ReviewStatus)},
  };
}

std::string SandboxTools::SandboxOf(const json& arguments) {
  std::string named = arguments.contains("sandbox") ? arguments["sandbox"].get<std::string>() : opened_;
  if (named.empty()) throw ToolRefusal("no sandbox is open: call sandbox_open first (or name one with the sandbox argument)");
  // Asked afresh at every call, never kept: the server lives long, and meanwhile the person may
  // destroy a sandbox (the daemon's NotFound names it) or make another one under its name.
  sdbus::ObjectPath path;
  ManagerProxy(ctx_.Bus()).raw().callMethod("GetSandbox").onInterface(sandboxd::api::kManagerInterface).withArguments(named).storeResultsTo(path);
  return path;
}

ToolResult SandboxTools::Open(const json& arguments, Cancellation&) {
  std::string dir = arguments.value("path", workdir_);
  if (dir.empty()) throw ToolRefusal("path is empty; leave it out for the server's working directory");
  if (dir.front() != '/') dir = workdir_ + "/" + dir;
  char* resolved = realpath(dir.c_str(), nullptr);
  if (!resolved) throw ToolRefusal("cannot open a sandbox over " + dir + ": " + strerror(errno));
  std::string real(resolved);
  free(resolved);
  struct stat st;
  if (stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw ToolRefusal(real + " is not a directory");

  ManagerProxy manager(ctx_.Bus());
  for (const auto& entry : manager.ListSandboxes()) {
    const auto& roots = entry.get<4>();
    if (entry.get<2>() != getuid() || std::find(roots.begin(), roots.end(), real) == roots.end()) continue;
    opened_ = entry.get<0>();
    json opened = {{"sandbox", opened_}, {"name", entry.get<1>()}, {"roots", roots}, {"state", entry.get<3>()}, {"created", false}};
    return {"Opened your sandbox " + opened_ + " (" + entry.get<1>() + ") over " + real + ", which was already there (" + entry.get<3>() +
                "). The other tools act on it.",
            opened, false};
  }
  std::map<std::string, sdbus::Variant> options;
  if (arguments.contains("name")) options["name"] = sdbus::Variant(arguments["name"].get<std::string>());
  if (arguments.value("scratch_home", false)) options["scratch_home"] = sdbus::Variant(true);
  sdbus::ObjectPath path;
  manager.raw()
      .callMethod("CreateSandbox")
      .onInterface(sandboxd::api::kManagerInterface)
      .withTimeout(std::chrono::minutes(10))  // polkit may be asking the person
      .withArguments(std::vector<std::string>{real}, options, uint64_t{0})
      .storeResultsTo(path);
  opened_ = IdOf(path);
  auto info = SandboxProxy(ctx_.Bus(), path).GetInfo();
  std::string name = info["name"].get<std::string>();
  json opened = {{"sandbox", opened_}, {"name", name}, {"roots", {real}}, {"state", "active"}, {"created", true}};
  return {"Made a new sandbox " + opened_ + " (" + name + ") over " + real + ". The other tools act on it.", opened, false};
}

ToolResult SandboxTools::Run(const json& arguments, Cancellation& cancellation) {
  const std::string path = SandboxOf(arguments);
  SandboxProxy sandbox(ctx_.Bus(), path);
  const auto roots = RootsOf(path);
  std::string cwd = roots.at(0);
  if (arguments.contains("cwd")) {
    const SandboxPlace place = PlaceOf(roots, arguments["cwd"], "cwd");
    cwd = place.relative == "." ? place.root : place.root + "/" + place.relative;
  }
  std::map<std::string, std::string> env = JobEnvironment({});
  if (arguments.contains("env"))
    for (const auto& [name, value] : arguments["env"].items()) {
      if (name.empty() || name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
        throw ToolRefusal("env name '" + name + "' is not a variable's name");
      env[name] = value.get<std::string>();
    }
  std::map<std::string, sdbus::Variant> options;
  if (arguments.contains("timeout_seconds")) options["timeout_sec"] = sdbus::Variant(arguments["timeout_seconds"].get<uint64_t>());
  auto command = arguments["command"].get<std::vector<std::string>>();
  // A call given up before its job starts starts none.
  if (cancellation.cancelled()) throw ToolRefusal("the call was cancelled before its job started");
  // No streams of ours: the daemon captures the job's output, which job_output reads.
  sdbus::ObjectPath job_path = sandbox.Run(command, cwd, env, std::map<std::string, sdbus::UnixFd>{}, options, 0);
  const std::string job = IdOf(job_path);
  // A client that gives up on the call (its timeout, the person's stop) cancels the job: no one
  // would hear of it, a background one included (its id is in the answer never sent). From the
  // server's reader or signal thread, so over a connection of its own.
  cancellation.OnCancel([this, job_path] {
    try {
      auto bus = ctx_.OpenBus();
      JobProxy(*bus, job_path).Cancel();
    } catch (const sdbus::Error&) {
      // Ended meanwhile: nothing to cancel.
    }
  });
  if (arguments.value("background", false))
    return {"Started job " + job + " in the background; job_output reads its output, job_cancel stops it.", json{{"job", job}}, false};
  int32_t exit_status = 0;
  std::string reason;
  JobProxy(ctx_.Bus(), job_path)
      .raw()
      .callMethod("Wait")
      .onInterface(sandboxd::api::kJobInterface)
      .withTimeout(std::chrono::hours(24 * 365))  // the job's own timeout ends it
      .storeResultsTo(exit_status, reason);
  return OutputOf(job, 0, kRunOutputBytes);
}

ToolResult SandboxTools::OutputOf(const std::string& job_id, uint64_t offset, size_t max_bytes) try {
  JobProxy job(ctx_.Bus(), JobPathOf(job_id));
  // The state first: output that came before the end is all there once the end is seen.
  auto status = job.GetStatus();
  const bool running = status["state"].get<std::string>() == "running";
  std::string output;
  bool more = false;
  for (;;) {
    size_t want = std::min<size_t>(max_bytes + 1 - output.size(), 1u << 20);
    std::vector<uint8_t> data = job.ReadOutput(offset + output.size(), static_cast<uint32_t>(want));
    if (data.empty()) break;
    output.append(data.begin(), data.end());
    if (output.size() > max_bytes) {
      more = true;
      output.resize(max_bytes);
      break;
    }
  }
  const uint64_t next = offset + output.size();
  json structured = {{"job", job_id}, {"state", running ? "running" : "finished"}, {"output", output}, {"offset", offset}, {"next_offset", next},
                     {"more", more}};
  std::string text = output;
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (more) text += "[output cut after " + std::to_string(output.size()) + " bytes; job_output with offset " + std::to_string(next) + " reads on]\n";
  if (status["output_truncated"].get<bool>())
    text += "[the daemon kept only the first " + std::to_string(status["output_cap"].get<uint64_t>()) + " bytes of the job's output]\n";
  if (running) {
    text += "[job " + job_id + " is still running]";
  } else {
    const int32_t exit_status = status["exit_status"].get<int32_t>();
    const std::string reason = status["reason"].get<std::string>();
    structured["exit_status"] = exit_status;
    structured["reason"] = reason;
    // What the job's forwarder refused (a sandbox the person allowed some hosts): the agent
    // learns which host it may not reach, rather than guessing at a network failure.
    std::vector<RefusedConnection> refused;
    if (status.count("refused"))
      for (const auto& entry : status["refused"].get<std::vector<sdbus::Struct<std::string, uint16_t, std::string>>>())
        refused.push_back({entry.get<0>(), entry.get<1>(), entry.get<2>()});
    const uint32_t refused_count = status.count("refused_count") ? status["refused_count"].get<uint32_t>() : 0;
    if (status.count("no_route_count") && exit_status != 0)
      if (std::string note = NoNetworkNote(status["no_route_count"].get<uint64_t>()); !note.empty()) text += "[" + note + "]\n";
    if (std::string note = RefusalNote(refused, refused_count); !note.empty()) {
      text += "[" + note + "]\n";
      structured["refused"] = json::array();
      for (const auto& one : refused) structured["refused"].push_back({{"host", one.host}, {"port", one.port}, {"reason", one.reason}});
    }
    if (std::string failure = status.count("failure") ? status["failure"].get<std::string>() : ""; !failure.empty()) {
      text += "[sandboxd: " + failure + "]\n";
      structured["failure"] = failure;
    }
    text += "[job " + job_id + " " + HowItEnded(exit_status, reason) + "]";
  }
  return {text, structured, false};
} catch (const sdbus::Error& e) {
  ThrowAboutJob(e, job_id);
}

ToolResult SandboxTools::JobOutput(const json& arguments, Cancellation&) {
  return OutputOf(arguments["job"], arguments.value("offset", uint64_t{0}), arguments.value("max_bytes", size_t{kRunOutputBytes}));
}

ToolResult SandboxTools::JobCancel(const json& arguments, Cancellation&) {
  const std::string id = arguments["job"];
  try {
    return CancelJob(id);
  } catch (const sdbus::Error& e) {
    ThrowAboutJob(e, id);
  }
}

ToolResult SandboxTools::CancelJob(const std::string& id) {
  JobProxy job(ctx_.Bus(), JobPathOf(id));
  job.Cancel();
  int32_t exit_status = 0;
  std::string reason;
  job.raw()
      .callMethod("Wait")
      .onInterface(sandboxd::api::kJobInterface)
      .withTimeout(std::chrono::minutes(1))
      .storeResultsTo(exit_status, reason);
  return {"Job " + id + " " + HowItEnded(exit_status, reason) + ".", json{{"job", id}, {"exit_status", exit_status}, {"reason", reason}}, false};
}

ToolResult SandboxTools::Changes(const json& arguments, Cancellation&) {
  std::string text;
  json listed = json::array();
  const std::string sandbox_path = SandboxOf(arguments);
  // A repository's own data is a line per repository in the text, as `changes` shows it
  // (git_fold.h); the structured list keeps every change.
  GitFold git([&] { return SandboxProxy(ctx_.Bus(), sandbox_path).GetInfo()["roots"].get<std::vector<std::string>>().size(); });
  size_t total = ForEachChange(ctx_, sandbox_path, [&](const ListedChange& change, std::string_view) {
    if (listed.size() >= kChangesListed) return;
    listed.push_back(ChangeObject(change));
    if (git.Take(change)) return;
    text += ChangeLetter(change.kind);
    text += ' ' + sandboxd::api::ShowWireName(change.path);
    if (!change.renamed_from.empty()) text += " (renamed from " + sandboxd::api::ShowWireName(change.renamed_from) + ")";
    text += ReviewNote(change);
    if (change.conflict) text += " [conflicts with the live tree: " + change.conflict_reason + "]";
    text += '\n';
  });
  json folds = json::array();
  if (!git.empty())
    for (const auto& line : git.Lines(ctx_, sandbox_path)) {
      text += line + '\n';
      folds.push_back(line);
    }
  if (total == 0) text = "No changes: the sandbox holds nothing its directory does not.\n";
  if (total > listed.size()) text += "[" + std::to_string(total - listed.size()) + " more changes not listed]\n";
  json structured{{"changes", listed}, {"total", total}};
  if (!folds.empty()) structured["git"] = folds;
  return {text, structured, false};
}

ToolResult SandboxTools::Diff(const json& arguments, Cancellation&) {
  std::vector<std::string> paths;
  if (arguments.contains("paths"))
    for (const auto& path : arguments["paths"]) paths.push_back(CheckSandboxPath(path, "path"));
  // Structured selectors of whole changes: a name is never parsed for a hunk number.
  const auto selectors = sandboxd::api::ToWire(sandboxd::api::WholeSelectors(paths));
  const bool stat = arguments.value("stat", false);
  std::string diff;
  size_t total = 0;
  DiffSummary summary;
  CallIntoPipe(ctx_, SandboxOf(arguments),
               {"Diff", [&](sdbus::MethodCall& call, const sdbus::UnixFd& out) { call << selectors << out << std::map<std::string, sdbus::Variant>{}; }, {}},
               [&](std::string_view data) {
                 total += data.size();
                 if (stat) summary.Add(data);
                 if (!stat && diff.size() < kDiffBytes) diff.append(data.substr(0, kDiffBytes - diff.size()));
               });
  if (stat) diff = summary.Stat(100);
  if (total == 0) return {"No changes to show.\n", json{{"bytes", 0}}, false};
  if (!stat && total > diff.size())
    diff += "\n[diff cut after " + std::to_string(diff.size()) + " of " + std::to_string(total) + " bytes; ask for fewer paths]\n";
  return {diff, json{{"bytes", total}}, false};
}

}  // namespace sandboxctl::mcp
