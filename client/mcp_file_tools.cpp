// The file tools of `sandboxctl mcp`: read_file, write_file, edit_file and list_dir. Each runs
// this very program as a job of the sandbox (file_helper.h), so a file is read and written in
// the sandbox's view, as its owner, beneath its root, and a write is a job's write: listed,
// announced and committed, or not, as any other.

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "file_helper.h"
#include "mcp_tools.h"
#include "object_paths.h"
#include "proxies.h"
#include "quote_path.h"
#include "unique_fd.h"
#include "utf8.h"
#include "verbs.h"

namespace sandboxctl::mcp {
namespace {

using nlohmann::json;
using sandboxd::UniqueFd;

/// What the helper may answer at most: the text read, or a listing, and its line of JSON.
constexpr size_t kMaxAnswerBytes = file_helper::kReadBytes + (4u << 20);
/// A helper job that has not answered by then is stopped (it never waits on anything).
constexpr uint64_t kHelperTimeoutSeconds = 120;

/// This program's path, which a job finds at the same place (the host is read-only in jobs).
std::string OwnProgram() {
  char path[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) throw ToolRefusal(std::string("cannot tell where sandboxctl's own program is: ") + strerror(errno));
  std::string own(path, static_cast<size_t>(length));
  if (own.size() > 10 && own.compare(own.size() - 10, 10, " (deleted)") == 0)
    throw ToolRefusal("sandboxctl's program was replaced on disk since this server started (an upgrade?): restart the MCP server");
  return own;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t written = write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;  // EPIPE: the helper is gone; its end tells why
    data.remove_prefix(static_cast<size_t>(written));
  }
}

std::string ReadAll(int fd, size_t limit) {
  std::string data;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || data.size() + static_cast<size_t>(n) > limit) return data;
    data.append(buffer, static_cast<size_t>(n));
  }
}

std::string Shown(const std::string& path) { return sandboxd::api::QuotePath(path); }

}  // namespace

std::vector<std::string> SandboxTools::RootsOf(const std::string& sandbox_path) {
  return SandboxProxy(ctx_.Bus(), sandbox_path).GetInfo()["roots"].get<std::vector<std::string>>();
}

SandboxTools::HelperAnswer SandboxTools::CallFileHelper(const json& arguments, const std::string& op, const std::string& path,
                                                        const json& request, Cancellation& cancellation) {
  const std::string sandbox_path = SandboxOf(arguments);
  const SandboxPlace place = PlaceOf(RootsOf(sandbox_path), path, "path");
  const std::string program = OwnProgram();
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw ToolRefusal(std::string("cannot make a pipe: ") + strerror(errno));
  UniqueFd in_read(in[0]), in_write(in[1]);
  if (pipe2(out, O_CLOEXEC) != 0) throw ToolRefusal(std::string("cannot make a pipe: ") + strerror(errno));
  UniqueFd out_read(out[0]), out_write(out[1]);
  if (cancellation.cancelled()) throw ToolRefusal("the call was cancelled before its job started");

  sdbus::ObjectPath job_path;
  {
    // stderr is left to the daemon to capture: what a helper that failed said is read from there.
    std::map<std::string, sdbus::UnixFd> fds = {{"stdin", sdbus::UnixFd(in_read.get())}, {"stdout", sdbus::UnixFd(out_write.get())}};
    std::map<std::string, sdbus::Variant> options = {{"timeout_sec", sdbus::Variant(kHelperTimeoutSeconds)}};
    job_path = SandboxProxy(ctx_.Bus(), sandbox_path)
                   .Run({program, file_helper::kArgument, op, place.root, place.relative}, place.root, {}, fds, options, 0);
  }
  // Only the job holds these ends now: its end closes them, and our reads and writes end.
  in_read.reset();
  out_write.reset();
  cancellation.OnCancel([this, job_path] {
    try {
      auto bus = ctx_.OpenBus();
      JobProxy(*bus, job_path).Cancel();
    } catch (const sdbus::Error&) {
    }
  });
  // The helper reads all of its request before it answers: write, close, then read.
  WriteAll(in_write.get(), request.dump(-1, ' ', false, json::error_handler_t::replace));
  in_write.reset();
  const std::string answer = ReadAll(out_read.get(), kMaxAnswerBytes);
  out_read.reset();

  JobProxy job(ctx_.Bus(), job_path);
  int32_t exit_status = 0;
  std::string reason;
  job.raw()
      .callMethod("Wait")
      .onInterface(sandboxd::api::kJobInterface)
      .withTimeout(std::chrono::seconds(kHelperTimeoutSeconds + 60))
      .storeResultsTo(exit_status, reason);
  if (cancellation.cancelled()) throw ToolRefusal("the call was cancelled");

  const size_t line_end = answer.find('\n');
  json fields;
  if (line_end != std::string::npos) fields = json::parse(answer.substr(0, line_end), nullptr, false);
  if (!fields.is_object()) {
    std::vector<uint8_t> said = job.ReadOutput(0, 2048);
    std::string why(said.begin(), said.end());
    while (!why.empty() && why.back() == '\n') why.pop_back();
    throw ToolRefusal("the file helper (job " + job_path.substr(job_path.rfind('/') + 1) + ") answered nothing for " + Shown(path) + ": its job " +
                      reason + " with status " + std::to_string(exit_status) + (why.empty() ? "" : " (" + sandboxd::api::EscapeControlBytes(why) + ")"));
  }
  if (fields.contains("error")) throw ToolRefusal(fields["error"].get<std::string>());
  return {std::move(fields), answer.substr(line_end + 1)};
}

ToolResult SandboxTools::ReadFile(const json& arguments, Cancellation& cancellation) {
  const std::string path = CheckSandboxPath(arguments["path"], "path");
  json request = json::object();
  if (arguments.contains("offset")) request["offset"] = arguments["offset"];
  if (arguments.contains("limit")) request["limit"] = arguments["limit"];
  HelperAnswer answer = CallFileHelper(arguments, "read", path, request, cancellation);
  const json& f = answer.fields;
  const uint64_t first = f["first_line"], lines = f["lines"], total = f["total_lines"];
  std::string text = std::move(answer.text);
  if (f["cut"].get<bool>() || first > 1 || first + lines - 1 < total) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "[lines " + std::to_string(first) + "-" + std::to_string(first + lines - 1) + " of " + std::to_string(total) + " of " + Shown(path);
    if (f["cut"].get<bool>()) text += ", cut at " + std::to_string(file_helper::kReadBytes >> 10) + " KiB";
    if (first + lines - 1 < total) text += "; read_file with offset " + std::to_string(first + lines) + " reads on";
    text += "]\n";
  }
  json structured = {{"path", path}, {"size", f["size"]}, {"total_lines", total}, {"first_line", first}, {"lines", lines}, {"cut", f["cut"]}};
  return {text, structured, false};
}

ToolResult SandboxTools::WriteFile(const json& arguments, Cancellation& cancellation) {
  const std::string path = CheckSandboxPath(arguments["path"], "path");
  if (path == ".") throw ToolRefusal("path '.' is the sandbox's root, a directory: name a file");
  const std::string& content = arguments["content"].get_ref<const std::string&>();
  // Refused before any job: the helper would refuse it too, after it crossed two pipes.
  if (content.size() > file_helper::kWriteBytes)
    throw ToolRefusal("content for " + Shown(path) + " is " + std::to_string(content.size()) + " bytes; write_file writes at most " +
                      std::to_string(file_helper::kWriteBytes >> 20) + " MiB at once (run a command to make larger files)");
  HelperAnswer answer = CallFileHelper(arguments, "write", path, json{{"content", content}}, cancellation);
  const bool created = answer.fields["created"];
  return {"Wrote " + std::to_string(content.size()) + " bytes to " + Shown(path) + (created ? " (a new file)" : "") + " in the sandbox.",
          json{{"path", path}, {"bytes", content.size()}, {"created", created}}, false};
}

ToolResult SandboxTools::EditFile(const json& arguments, Cancellation& cancellation) {
  const std::string path = CheckSandboxPath(arguments["path"], "path");
  const std::string& old_text = arguments["old_text"].get_ref<const std::string&>();
  const std::string& new_text = arguments["new_text"].get_ref<const std::string&>();
  if (old_text.size() > file_helper::kWriteBytes || new_text.size() > file_helper::kWriteBytes)
    throw ToolRefusal("old_text and new_text take at most " + std::to_string(file_helper::kWriteBytes >> 20) + " MiB each");
  HelperAnswer answer = CallFileHelper(arguments, "edit", path, json{{"old_text", old_text}, {"new_text", new_text}}, cancellation);
  const uint64_t line = answer.fields["line"];
  return {"Replaced the text at line " + std::to_string(line) + " of " + Shown(path) + " in the sandbox.",
          json{{"path", path}, {"line", line}, {"bytes", answer.fields["bytes"]}}, false};
}

ToolResult SandboxTools::ListDir(const json& arguments, Cancellation& cancellation) {
  const std::string path = CheckSandboxPath(arguments.value("path", std::string(".")), "path");
  HelperAnswer answer = CallFileHelper(arguments, "list", path, json::object(), cancellation);
  std::string text;
  for (const auto& entry : answer.fields["entries"]) {
    const std::string name = sandboxd::api::ShowWireName(entry["name"].get<std::string>());
    const std::string type = entry["type"];
    if (type == "directory")
      text += name + "/\n";
    else if (type == "file")
      text += name + " (" + std::to_string(entry["size"].get<uint64_t>()) + " bytes)\n";
    else if (type == "symlink")
      text += name + " -> " + sandboxd::api::ShowWireName(entry.value("target", std::string("?"))) + "\n";
    else
      text += name + " (" + type + ")\n";
  }
  const size_t total = answer.fields["total"], listed = answer.fields["entries"].size();
  if (total == 0) text = Shown(path) + " is empty.\n";
  if (total > listed) text += "[" + std::to_string(total - listed) + " more entries not listed]\n";
  json structured = answer.fields;
  structured["path"] = path;
  return {text, structured, false};
}

}  // namespace sandboxctl::mcp
