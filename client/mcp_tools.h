#pragma once
/// The tools `sandboxctl mcp` gives an agent (DESIGN, "Agents"), each over sandboxd's D-Bus API
/// as the user who started the server: the daemon checks every call's ownership, and nothing
/// here commits, approves, rejects, undoes, discards, destroys or grants the network. Paths an
/// agent gives are relative to the sandbox's root and never leave it ("..", absolute paths and
/// empty components are refused here; the daemon keeps a job's cwd inside its roots anyway).

#include <cstddef>
#include <string>
#include <vector>

#include "context.h"
#include "listed_change.h"
#include "mcp_server.h"

namespace sandboxctl::mcp {

/// How much of a job's output `run` answers with before it cuts (job_output reads on).
inline constexpr size_t kRunOutputBytes = 64u << 10;
/// How much of a diff `diff` answers with before it cuts.
inline constexpr size_t kDiffBytes = 256u << 10;
/// How many changes `changes` lists before it cuts.
inline constexpr size_t kChangesListed = 2000;

/// `path` if it names something beneath a root: relative, no "..", "." or empty component
/// ("." alone is the root). Throws ToolRefusal naming it otherwise.
std::string CheckSandboxPath(const std::string& path, const std::string& what);

/// A change as the tools answer it in structured content: root, path, kind, review (and the
/// hunks decided, for a change decided hunk by hunk), conflict.
nlohmann::json ChangeObject(const ListedChange& change);

/// Where a tool's path is: the root's real path and the path beneath it.
struct SandboxPlace {
  std::string root;
  std::string relative;  ///< "." for the root itself
};

/// `path` (checked as CheckSandboxPath checks it) in a sandbox of `roots`: with more than one
/// root it begins with the root's index ("1/src"), as changes and diff name paths.
SandboxPlace PlaceOf(const std::vector<std::string>& roots, const std::string& path, const std::string& what);

class SandboxTools {
 public:
  /// `workdir`: the server's working directory, the sandbox_open default.
  SandboxTools(Context& ctx, std::string workdir);
  std::vector<Tool> Tools();

 private:
  // Each tool: its arguments, checked against its schema; what tells it its call was cancelled.
  ToolResult Open(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult Run(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult JobOutput(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult JobCancel(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult Changes(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult Diff(const nlohmann::json& arguments, Cancellation& cancellation);
  // The file tools (mcp_file_tools.cpp): each runs sandboxctl's file helper as a job.
  ToolResult ReadFile(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult WriteFile(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult EditFile(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult ListDir(const nlohmann::json& arguments, Cancellation& cancellation);

  // The review tools (mcp_review_tools.cpp): the agent asks, the owner answers.
  ToolResult RequestReview(const nlohmann::json& arguments, Cancellation& cancellation);
  ToolResult ReviewStatus(const nlohmann::json& arguments, Cancellation& cancellation);

  /// What the file helper answered.
  struct HelperAnswer {
    nlohmann::json fields;
    std::string text;
  };
  /// Runs the file helper (file_helper.h) for `op` at `path` in the sandbox the arguments name,
  /// as a job of that sandbox with `request` on its stdin. Throws ToolRefusal with the helper's
  /// refusal, or naming the job when it failed.
  HelperAnswer CallFileHelper(const nlohmann::json& arguments, const std::string& op, const std::string& path, const nlohmann::json& request,
                              Cancellation& cancellation);
  /// The roots of the sandbox at `sandbox_path`.
  std::vector<std::string> RootsOf(const std::string& sandbox_path);

  /// The object path of the sandbox a tool acts on: its "sandbox" argument, else the one
  /// sandbox_open opened. Throws ToolRefusal when there is neither.
  std::string SandboxOf(const nlohmann::json& arguments);
  /// Cancels job `id` and waits for its end.
  ToolResult CancelJob(const std::string& id);
  /// A job's output from `offset`, at most `max_bytes`, with its status.
  ToolResult OutputOf(const std::string& job_id, uint64_t offset, size_t max_bytes);

  Context& ctx_;
  std::string workdir_;
  std::string opened_;  ///< the id sandbox_open answered with; "" before
};

}  // namespace sandboxctl::mcp
