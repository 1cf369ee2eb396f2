#include "mcp_server.h"

#include <condition_variable>
#include <deque>
#include <iterator>
#include <memory>
#include <thread>
#include <utility>

namespace sandboxctl::mcp {
namespace {

using nlohmann::json;

// JSON-RPC 2.0's error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;

/// A job's output and a file's bytes need not be UTF-8, and JSON carries only UTF-8: what is
/// not becomes U+FFFD rather than failing the whole answer.
std::string Dump(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

json ErrorAnswer(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

std::string TypeOf(const json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number_integer() || value.is_number_unsigned()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

/// Why `value` is not of `schema`'s type; "" when it is.
std::string Mismatch(const json& schema, const json& value) {
  const std::string type = schema.value("type", "");
  if (type == "string") return value.is_string() ? "" : "must be a string, not " + TypeOf(value);
  if (type == "boolean") return value.is_boolean() ? "" : "must be a boolean, not " + TypeOf(value);
  if (type == "integer") {
    if (!value.is_number_integer() && !value.is_number_unsigned()) return "must be an integer, not " + TypeOf(value);
    if (schema.contains("minimum") && value.get<int64_t>() < schema["minimum"].get<int64_t>())
      return "must be at least " + std::to_string(schema["minimum"].get<int64_t>());
    if (schema.contains("maximum") && value.is_number_integer() && value.get<int64_t>() > schema["maximum"].get<int64_t>())
      return "must be at most " + std::to_string(schema["maximum"].get<int64_t>());
    return "";
  }
  if (type == "array") {
    if (!value.is_array()) return "must be an array of strings, not " + TypeOf(value);
    for (const auto& item : value)
      if (!item.is_string()) return "must hold strings only, not " + TypeOf(item);
    if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>())
      return "must hold at least " + std::to_string(schema["minItems"].get<size_t>()) + " item(s)";
    return "";
  }
  if (type == "object") {
    if (!value.is_object()) return "must be an object of strings, not " + TypeOf(value);
    for (const auto& [key, item] : value.items())
      if (!item.is_string()) return "must map names to strings; '" + key + "' is " + TypeOf(item);
    return "";
  }
  return "has a type this server cannot check";
}

}  // namespace

std::optional<std::string> CheckArguments(const json& schema, const json& arguments) {
  if (!arguments.is_object()) return "the arguments must be an object, not " + TypeOf(arguments);
  const json& properties = schema.contains("properties") ? schema["properties"] : json::object();
  // Never an argument silently ignored: one the tool does not take is refused, named.
  for (const auto& [key, value] : arguments.items()) {
    if (!properties.contains(key)) return "unknown argument '" + key + "'";
    if (std::string why = Mismatch(properties[key], value); !why.empty()) return "argument '" + key + "' " + why;
  }
  if (schema.contains("required"))
    for (const auto& key : schema["required"])
      if (!arguments.contains(key.get<std::string>())) return "missing argument '" + key.get<std::string>() + "'";
  return std::nullopt;
}

Server::Server(std::string version, std::string instructions, std::vector<Tool> tools)
    : version_(std::move(version)), instructions_(std::move(instructions)), tools_(std::move(tools)) {}

void Cancellation::OnCancel(std::function<void()> stop) {
  bool now = false;
  {
    std::lock_guard lock(mutex_);
    stop_ = stop;
    now = cancelled_;
  }
  if (now && stop) stop();
}

void Cancellation::Cancel() {
  std::function<void()> stop;
  {
    std::lock_guard lock(mutex_);
    if (cancelled_) return;
    cancelled_ = true;
    stop = stop_;
  }
  if (stop) stop();  // outside the lock: it may wait for the daemon
}

bool Cancellation::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

std::optional<Server::Request> Server::Read(const std::string& line, const std::function<void(const json& id)>& cancel) {
  auto refuse = [](const json& id, int code, const std::string& message) {
    return Request{id, Dump(ErrorAnswer(id, code, message)), nullptr};
  };
  if (line.find_first_not_of(" \t\r") == std::string::npos) return std::nullopt;
  json message = json::parse(line, nullptr, false);
  if (message.is_discarded()) return refuse(nullptr, kParseError, "Parse error: the line is not JSON");
  if (message.is_array())
    return refuse(nullptr, kInvalidRequest, "Invalid Request: batches are not part of MCP 2025-06-18; send one message per line");
  if (!message.is_object() || message.value("jsonrpc", "") != "2.0")
    return refuse(nullptr, kInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message");
  const bool has_id = message.contains("id");
  const json id = has_id ? message["id"] : json(nullptr);
  if (has_id && !id.is_string() && !id.is_number_integer() && !id.is_number_unsigned())
    return refuse(nullptr, kInvalidRequest, "Invalid Request: an id must be a string or an integer");
  if (!message.contains("method")) return std::nullopt;  // a response: this server asks nothing
  if (!message["method"].is_string()) return refuse(id, kInvalidRequest, "Invalid Request: method must be a string");
  const std::string method = message["method"];
  const json params = message.contains("params") ? message["params"] : json::object();
  if (!has_id) {
    // Notifications need no answer; a cancellation stops the call it names.
    if (method == "notifications/cancelled" && params.is_object() && params.contains("requestId")) cancel(params["requestId"]);
    return std::nullopt;
  }
  if (!params.is_object()) return refuse(id, kInvalidParams, "Invalid params: params must be an object");
  if (method == "tools/call") {
    // A call the server refuses unmade is answered now, not after the calls ahead of it (a
    // long run): the checks need no tool to run.
    try {
      CheckedTool(params);
    } catch (const RpcError& e) {
      return refuse(id, e.code, e.what());
    }
    return Request{id, std::nullopt, params};
  }
  return Request{id, Answer(id, [&] { return Dispatch(method, params); }), nullptr};
}

std::string Server::Answer(const json& id, const std::function<json()>& call) {
  try {
    return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"result", call()}});
  } catch (const RpcError& e) {
    return Dump(ErrorAnswer(id, e.code, e.what()));
  } catch (const std::exception& e) {
    return Dump(ErrorAnswer(id, kInternalError, std::string("Internal error: ") + e.what()));
  }
}

std::optional<std::string> Server::Handle(const std::string& line) {
  std::optional<Request> request = Read(line, [](const json&) {});
  if (!request || request->answer) return request ? request->answer : std::nullopt;
  Cancellation never;
  return Answer(request->id, [&] { return CallTool(request->call, never); });
}

json Server::Dispatch(const std::string& method, const json& params) {
  if (method == "initialize") {
    // The version asked for is answered with the one this server speaks; a client that cannot
    // speak it ends the session (the protocol's negotiation).
    return {{"protocolVersion", kProtocolVersion},
            {"capabilities", {{"tools", {{"listChanged", false}}}}},
            {"serverInfo", {{"name", "sandboxd"}, {"title", "sandboxd: copy-on-write sandboxes"}, {"version", version_}}},
            {"instructions", instructions_}};
  }
  if (method == "ping") return json::object();
  if (method == "tools/list") {
    if (params.contains("cursor")) throw RpcError(kInvalidParams, "Invalid params: this server lists every tool at once; no cursor is valid");
    json list = json::array();
    for (const auto& tool : tools_)
      list.push_back({{"name", tool.name},
                      {"title", tool.title},
                      {"description", tool.description},
                      {"inputSchema", tool.input_schema},
                      {"annotations",
                       {{"title", tool.title}, {"readOnlyHint", tool.read_only}, {"destructiveHint", false}, {"openWorldHint", false}}}});
    return {{"tools", list}};
  }
  throw RpcError(kMethodNotFound, "Method not found: " + method);
}

const Tool& Server::CheckedTool(const json& params) const {
  if (!params.contains("name") || !params["name"].is_string()) throw RpcError(kInvalidParams, "Invalid params: tools/call needs a tool name");
  const std::string name = params["name"];
  const Tool* tool = nullptr;
  for (const auto& candidate : tools_)
    if (candidate.name == name) tool = &candidate;
  if (!tool) throw RpcError(kInvalidParams, "Unknown tool: " + name);
  const json arguments = params.contains("arguments") ? params["arguments"] : json::object();
  if (auto why = CheckArguments(tool->input_schema, arguments)) throw RpcError(kInvalidParams, "Invalid arguments for " + name + ": " + *why);
  return *tool;
}

json Server::CallTool(const json& params, Cancellation& cancellation) {
  const Tool* tool = &CheckedTool(params);
  const json arguments = params.contains("arguments") ? params["arguments"] : json::object();
  ToolResult result;
  try {
    result = tool->call(arguments, cancellation);
  } catch (const std::exception& e) {
    // A refusal or a failed call is the model's to read and act on, not a protocol error.
    result = {e.what(), nullptr, true};
  }
  json answer = {{"content", json::array({{{"type", "text"}, {"text", result.text}}})}, {"isError", result.is_error}};
  if (result.structured.is_object()) answer["structuredContent"] = result.structured;
  return answer;
}

void Server::Serve(std::istream& in, std::ostream& out) {
  std::mutex out_mutex;
  auto write = [&](const std::string& answer) {
    std::lock_guard lock(out_mutex);
    out << answer << '\n' << std::flush;
  };
  // Tool calls wait in queue_ for the one thread that makes them, in order; the reader never
  // waits for one.
  std::condition_variable ready;
  bool read_all = false;
  std::thread caller([&] {
    for (;;) {
      Request request;
      std::shared_ptr<Cancellation> cancellation = std::make_shared<Cancellation>();
      {
        std::unique_lock lock(calls_mutex_);
        ready.wait(lock, [&] { return read_all || !queue_.empty(); });
        if (queue_.empty()) return;
        request = std::move(queue_.front());
        queue_.pop_front();
        current_ = cancellation;
        current_id_ = request.id;
      }
      std::string answer = Answer(request.id, [&] { return CallTool(request.call, *cancellation); });
      {
        std::lock_guard lock(calls_mutex_);
        current_.reset();
        current_id_ = nullptr;
      }
      call_ended_.notify_all();
      if (!cancellation->cancelled()) write(answer);  // a cancelled request gets no answer
    }
  });
  auto cancel = [&](const json& id) {
    std::shared_ptr<Cancellation> running;
    {
      std::lock_guard lock(calls_mutex_);
      std::erase_if(queue_, [&](const Request& waiting) { return waiting.id == id; });
      if (current_ && current_id_ == id) running = current_;
    }
    if (running) running->Cancel();
  };

  std::string line;
  std::istreambuf_iterator<char> at(in), end;
  while (at != end) {
    line.clear();
    bool too_long = false;
    for (; at != end && *at != '\n'; ++at) {
      if (line.size() < kMaxLineBytes)
        line.push_back(*at);
      else
        too_long = true;  // read on to the line's end, keeping nothing more
    }
    if (at != end) ++at;
    if (too_long) {
      write(Dump(ErrorAnswer(nullptr, kInvalidRequest,
                             "Invalid Request: a message longer than " + std::to_string(kMaxLineBytes >> 20) + " MiB was refused unread")));
      continue;
    }
    std::optional<Request> request = Read(line, cancel);
    if (!request) continue;
    if (request->answer) {
      write(*request->answer);
      continue;
    }
    std::lock_guard lock(calls_mutex_);
    queue_.push_back(std::move(*request));
    ready.notify_one();
  }
  {
    std::lock_guard lock(calls_mutex_);
    read_all = true;
  }
  ready.notify_one();
  caller.join();
}

void Server::CancelAll(std::chrono::milliseconds patience) {
  std::shared_ptr<Cancellation> running;
  {
    std::lock_guard lock(calls_mutex_);
    queue_.clear();
    running = current_;
  }
  if (!running) return;
  running->Cancel();
  std::unique_lock lock(calls_mutex_);
  call_ended_.wait_for(lock, patience, [&] { return current_ != running; });
}

}  // namespace sandboxctl::mcp
