#pragma once
/// The Model Context Protocol's server side (spec 2025-06-18) over stdio: JSON-RPC 2.0, one
/// message per line. It knows the protocol (initialize, ping, tools/list, tools/call, and the
/// errors of each) and the tools' input schemas; what a tool does is its own (mcp_tools.h). No
/// D-Bus here, so the unit tests drive it line by line.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <istream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sandboxctl::mcp {

/// What a tool answers: text for the model, the same as structured content where it has one,
/// and whether it is an error the model should see (a refusal, a failed call) rather than a
/// result.
struct ToolResult {
  std::string text;
  nlohmann::json structured;  ///< null: none
  bool is_error = false;
};

/// Thrown by a tool for a refusal the model can act on (a path with "..", no sandbox open): it
/// becomes a result with isError, its message as the text.
struct ToolRefusal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What a call in progress hears when its client cancels it (notifications/cancelled, or the
/// client going away). A tool that waits long registers what ends its wait (run: cancel the job).
class Cancellation {
 public:
  /// `stop` runs when the call is cancelled (at once, if it already is); one at a time.
  void OnCancel(std::function<void()> stop);
  void Cancel();
  bool cancelled() const;

 private:
  mutable std::mutex mutex_;
  bool cancelled_ = false;
  std::function<void()> stop_;
};

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  /// A JSON Schema of an object whose properties are strings, integers, booleans, arrays of
  /// strings or objects of strings; `required` and no other properties (CheckArguments).
  nlohmann::json input_schema;
  bool read_only = false;  ///< annotations.readOnlyHint: it changes nothing
  std::function<ToolResult(const nlohmann::json& arguments, Cancellation& cancellation)> call;
};

/// The protocol version this server speaks.
inline constexpr const char* kProtocolVersion = "2025-06-18";
/// A line longer than this is refused unread (a message that size is no sensible call).
inline constexpr size_t kMaxLineBytes = 64u << 20;

/// Why `arguments` do not fit `schema`, in one sentence naming the argument; nullopt when they
/// do. Only the schema forms Tool describes.
std::optional<std::string> CheckArguments(const nlohmann::json& schema, const nlohmann::json& arguments);

class Server {
 public:
  Server(std::string version, std::string instructions, std::vector<Tool> tools);

  /// Answers one line, a tool call included (it runs here, to its end); nothing for a
  /// notification (or a line of only white space).
  std::optional<std::string> Handle(const std::string& line);
  /// Reads lines from `in` until its end, writing each answer and a newline to `out` as it is
  /// ready. Tool calls run one at a time on a thread of their own, so that the reader keeps
  /// answering pings and hears a cancellation: a cancelled call is stopped (a run's job
  /// cancelled) and its answer never sent, as the protocol asks; one not started yet is dropped.
  /// At the input's end the calls read are made and answered before it returns.
  void Serve(std::istream& in, std::ostream& out);
  /// From any thread while Serve runs (a signal's): drops the calls waiting and cancels the one
  /// under way (a run's job), then waits for it to end, up to `patience`: a call cut off midway
  /// could have started a job no one cancels.
  void CancelAll(std::chrono::milliseconds patience);

 private:
  /// A request read and checked: either its answer, or a tool call still to make.
  struct Request {
    nlohmann::json id;
    std::optional<std::string> answer;  ///< set: answer with this
    nlohmann::json call;                ///< else: tools/call's params, to be made
  };
  /// Reads a line as far as deciding what to do with it; nullopt for a notification, which it
  /// acts on (a cancellation calls `cancel` with the request id).
  std::optional<Request> Read(const std::string& line, const std::function<void(const nlohmann::json& id)>& cancel);
  nlohmann::json Dispatch(const std::string& method, const nlohmann::json& params);
  /// tools/call's checks: the tool `params` names, with arguments that fit its schema; RpcError
  /// for an unknown tool or bad arguments.
  const Tool& CheckedTool(const nlohmann::json& params) const;
  /// CheckedTool, then the call.
  nlohmann::json CallTool(const nlohmann::json& params, Cancellation& cancellation);
  /// The answer to request `id` with `result`, or with the error `call` threw.
  std::string Answer(const nlohmann::json& id, const std::function<nlohmann::json()>& call);

  std::string version_;
  std::string instructions_;
  std::vector<Tool> tools_;
  // While Serve runs: the tool calls waiting, in order, and the one under way.
  std::mutex calls_mutex_;
  std::deque<Request> queue_;
  nlohmann::json current_id_;
  std::shared_ptr<Cancellation> current_;
  std::condition_variable call_ended_;
};

/// A JSON-RPC error the server answers with (code and message).
struct RpcError : std::runtime_error {
  RpcError(int code, const std::string& message) : std::runtime_error(message), code(code) {}
  int code;
};

}  // namespace sandboxctl::mcp
