// The MCP server's protocol side (mcp_server.h), a line at a time: what a client that lies,
// sends garbage or calls what is not there gets back. The tools themselves are the integration
// tests' (mcp_test.cpp, with the MCP SDK's own client).

#include "mcp_server.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <ext/stdio_filebuf.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <string>

namespace sandboxctl::mcp {
namespace {

using nlohmann::json;

Tool Echo() {
  return {"echo", "Echo", "Says its text back",
          json{{"type", "object"},
               {"properties",
                {{"text", {{"type", "string"}}},
                 {"times", {{"type", "integer"}, {"minimum", 1}}},
                 {"loud", {{"type", "boolean"}}},
                 {"words", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                 {"env", {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}}}},
               {"required", {"text"}},
               {"additionalProperties", false}},
          true, [](const json& arguments, Cancellation&) -> ToolResult {
            std::string text = arguments["text"];
            if (text == "refuse") throw ToolRefusal("refused: the text says so");
            if (text == "bytes") return {"\xff\xfe not UTF-8", nullptr, false};
            return {text, json{{"said", text}}, false};
          }};
}

class McpServerTest : public ::testing::Test {
 protected:
  json Ask(const json& message) {
    auto answer = server_.Handle(message.dump());
    EXPECT_TRUE(answer.has_value()) << message.dump();
    return answer ? json::parse(*answer) : json();
  }
  json Call(const json& arguments, const std::string& tool = "echo") {
    return Ask({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", arguments}}}});
  }
  Server server_{"1.2.3", "how to use it", {Echo()}};
};

TEST_F(McpServerTest, InitializeAnswersTheProtocolVersionItSpeaks) {
  json answer = Ask({{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "initialize"},
                     {"params", {{"protocolVersion", "2024-11-05"}, {"capabilities", json::object()}, {"clientInfo", {{"name", "t"}, {"version", "0"}}}}}});
  EXPECT_EQ(answer["id"], 1);
  EXPECT_EQ(answer["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(answer["result"]["serverInfo"]["name"], "sandboxd");
  EXPECT_EQ(answer["result"]["serverInfo"]["version"], "1.2.3");
  EXPECT_TRUE(answer["result"]["capabilities"].contains("tools"));
  EXPECT_EQ(answer["result"]["instructions"], "how to use it");
}

TEST_F(McpServerTest, NotificationsAndResponsesGetNoAnswer) {
  EXPECT_FALSE(server_.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(server_.Handle(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}})"));
  EXPECT_FALSE(server_.Handle(R"({"jsonrpc":"2.0","id":5,"result":{}})"));
  EXPECT_FALSE(server_.Handle("   "));
}

TEST_F(McpServerTest, GarbageGetsJsonRpcErrors) {
  EXPECT_EQ(json::parse(*server_.Handle("{not json"))["error"]["code"], -32700);
  EXPECT_EQ(json::parse(*server_.Handle("[1,2]"))["error"]["code"], -32600);
  EXPECT_EQ(json::parse(*server_.Handle(R"({"id":1,"method":"ping"})"))["error"]["code"], -32600);  // no jsonrpc
  EXPECT_EQ(json::parse(*server_.Handle(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})"))["error"]["code"], -32600);
  EXPECT_EQ(json::parse(*server_.Handle(R"({"jsonrpc":"2.0","id":1,"method":42})"))["error"]["code"], -32600);
  EXPECT_EQ(json::parse(*server_.Handle(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})"))["error"]["code"], -32602);
  json unknown = json::parse(*server_.Handle(R"({"jsonrpc":"2.0","id":"x","method":"resources/list"})"));
  EXPECT_EQ(unknown["id"], "x");
  EXPECT_EQ(unknown["error"]["code"], -32601);
  EXPECT_NE(unknown["error"]["message"].get<std::string>().find("resources/list"), std::string::npos);
}

TEST_F(McpServerTest, ToolsAreListedWithSchemaAndReadOnlyHint) {
  json answer = Ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  ASSERT_EQ(answer["result"]["tools"].size(), 1u);
  const json& tool = answer["result"]["tools"][0];
  EXPECT_EQ(tool["name"], "echo");
  EXPECT_EQ(tool["inputSchema"]["required"][0], "text");
  EXPECT_EQ(tool["annotations"]["readOnlyHint"], true);
  EXPECT_EQ(Ask({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}, {"params", {{"cursor", "x"}}}})["error"]["code"], -32602);
}

TEST_F(McpServerTest, ACallAnswersTextAndStructuredContent) {
  json answer = Call({{"text", "hi"}, {"times", 2}, {"loud", true}, {"words", {"a"}}, {"env", {{"K", "V"}}}});
  EXPECT_EQ(answer["result"]["isError"], false);
  EXPECT_EQ(answer["result"]["content"][0]["type"], "text");
  EXPECT_EQ(answer["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(answer["result"]["structuredContent"]["said"], "hi");
}

TEST_F(McpServerTest, UnknownToolsAndBadArgumentsAreProtocolErrorsNamingWhat) {
  auto message = [](const json& answer) { return answer["error"]["message"].get<std::string>(); };
  json unknown = Call({{"text", "hi"}}, "commit");
  EXPECT_EQ(unknown["error"]["code"], -32602);
  EXPECT_NE(message(unknown).find("commit"), std::string::npos);
  for (const auto& [arguments, named] : std::vector<std::pair<json, std::string>>{
           {json::object(), "'text'"},
           {{{"text", 1}}, "'text'"},
           {{{"text", "a"}, {"force", true}}, "'force'"},
           {{{"text", "a"}, {"times", 0}}, "'times'"},
           {{{"text", "a"}, {"times", "2"}}, "'times'"},
           {{{"text", "a"}, {"words", {"a", 1}}}, "'words'"},
           {{{"text", "a"}, {"env", {{"K", 1}}}}, "'env'"},
           {json::array(), "object"}}) {
    json answer = Call(arguments);
    EXPECT_EQ(answer["error"]["code"], -32602) << arguments.dump();
    EXPECT_NE(message(answer).find(named), std::string::npos) << message(answer);
  }
}

TEST_F(McpServerTest, ARefusalIsAResultTheModelReads) {
  json answer = Call({{"text", "refuse"}});
  EXPECT_EQ(answer["result"]["isError"], true);
  EXPECT_EQ(answer["result"]["content"][0]["text"], "refused: the text says so");
}

TEST_F(McpServerTest, BytesThatAreNotUtf8StillMakeAnAnswer) {
  json answer = Call({{"text", "bytes"}});
  std::string text = answer["result"]["content"][0]["text"];
  EXPECT_NE(text.find("not UTF-8"), std::string::npos);
  EXPECT_NE(text.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
}

TEST_F(McpServerTest, ServeAnswersEachLineAndRefusesAnOverlongOneUnread) {
  std::string input = R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n";
  input += std::string(kMaxLineBytes + 10, 'x') + "\n";
  input += R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"last"}}})";  // no newline
  std::istringstream in(input);
  std::ostringstream out;
  server_.Serve(in, out);
  std::istringstream answers(out.str());
  std::string line;
  std::vector<json> got;
  while (std::getline(answers, line)) got.push_back(json::parse(line));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0]["id"], 1);
  EXPECT_EQ(got[1]["error"]["code"], -32600);
  EXPECT_NE(got[1]["error"]["message"].get<std::string>().find("MiB"), std::string::npos);
  EXPECT_EQ(got[2]["id"], 2);  // a call read before the input ended is made and answered
  EXPECT_EQ(got[2]["result"]["content"][0]["text"], "last");
}

/// A tool that waits until its call is cancelled (10 s at most), and says whether it was.
struct Waiting {
  std::mutex mutex;
  std::condition_variable changed;
  bool started = false;
  bool stopped = false;
};

Tool Waiter(std::shared_ptr<Waiting> state) {
  return {"wait", "Wait", "Waits until cancelled", json{{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}}, false,
          [state](const json&, Cancellation& cancellation) -> ToolResult {
            cancellation.OnCancel([state] {
              std::lock_guard lock(state->mutex);
              state->stopped = true;
              state->changed.notify_all();
            });
            std::unique_lock lock(state->mutex);
            state->started = true;
            state->changed.notify_all();
            state->changed.wait_for(lock, std::chrono::seconds(10), [&] { return state->stopped; });
            return {"waited", nullptr, false};
          }};
}

/// `server` serving a pipe on a thread of its own, as it serves a host: lines go in as the test
/// sends them; Finish ends the input and waits for the server to end.
class PipedServe {
 public:
  explicit PipedServe(Server& server) {
    EXPECT_EQ(pipe(fds_), 0);
    buffer_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fds_[0], std::ios::in);
    in_ = std::make_unique<std::istream>(buffer_.get());
    serving_ = std::thread([this, &server] { server.Serve(*in_, out_); });
  }
  ~PipedServe() { Finish(); }
  void Send(const std::string& line) {
    std::string text = line + "\n";
    EXPECT_EQ(write(fds_[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  /// Every answer written, once the server has ended.
  std::string Finish() {
    if (fds_[1] >= 0) close(std::exchange(fds_[1], -1));
    if (serving_.joinable()) serving_.join();
    return out_.str();
  }

 private:
  int fds_[2] = {-1, -1};
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buffer_;
  std::unique_ptr<std::istream> in_;
  std::ostringstream out_;
  std::thread serving_;
};

bool WaitStarted(Waiting& state) {
  std::unique_lock lock(state.mutex);
  return state.changed.wait_for(lock, std::chrono::seconds(10), [&] { return state.started; });
}

constexpr const char* kWaitCall = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}})";

// A call under way does not stop the reader: a ping is answered meanwhile, and a cancellation
// reaches the call (a run's job is cancelled so), whose answer is then never sent.
TEST(McpServeTest, ACancellationStopsTheCallUnderWayAndItGetsNoAnswer) {
  auto state = std::make_shared<Waiting>();
  Server server("1", "", {Waiter(state)});
  PipedServe serve(server);
  serve.Send(kWaitCall);
  ASSERT_TRUE(WaitStarted(*state));
  serve.Send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  serve.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"timed out"}})");
  serve.Send(R"({"jsonrpc":"2.0","id":3,"method":"ping"})");
  std::istringstream answers(serve.Finish());
  EXPECT_TRUE(state->stopped);
  std::vector<json> got;
  for (std::string line; std::getline(answers, line);) got.push_back(json::parse(line));
  ASSERT_EQ(got.size(), 2u) << answers.str();
  EXPECT_EQ(got[0]["id"], 2);
  EXPECT_EQ(got[1]["id"], 3);
}

// A call the server refuses unmade (an unknown tool, arguments that do not fit) is answered at
// once, while the long call ahead of it still runs: read from a pipe as a host reads.
TEST(McpServeTest, ARefusedCallIsAnsweredWhileALongOneRuns) {
  auto state = std::make_shared<Waiting>();
  Server server("1", "", {Waiter(state)});
  int in[2], out[2];
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(out), 0);
  __gnu_cxx::stdio_filebuf<char> in_buffer(in[0], std::ios::in), out_buffer(out[1], std::ios::out);
  std::istream input(&in_buffer);
  std::ostream output(&out_buffer);
  std::thread serving([&] { server.Serve(input, output); });
  auto send = [&](const std::string& line) {
    std::string text = line + "\n";
    EXPECT_EQ(write(in[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  };
  send(kWaitCall);
  ASSERT_TRUE(WaitStarted(*state));
  send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"commit","arguments":{}}})");
  send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait","arguments":{"x":1}}})");
  // Two answers within 5 s, the wait call still running (it ends only when cancelled).
  std::string read;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       std::count(read.begin(), read.end(), '\n') < 2 && std::chrono::steady_clock::now() < until;) {
    pollfd ready{out[0], POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    char chunk[4096];
    ssize_t n = ::read(out[0], chunk, sizeof chunk);
    if (n > 0) read.append(chunk, static_cast<size_t>(n));
  }
  {
    std::lock_guard lock(state->mutex);
    EXPECT_FALSE(state->stopped) << "the answers came only after the long call";
  }
  send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  close(in[1]);
  serving.join();
  close(out[0]);
  std::istringstream answers(read);
  std::vector<json> got;
  for (std::string line; std::getline(answers, line);) got.push_back(json::parse(line));
  ASSERT_EQ(got.size(), 2u) << read;
  EXPECT_EQ(got[0]["id"], 2);
  EXPECT_EQ(got[0]["error"]["message"], "Unknown tool: commit");
  EXPECT_EQ(got[1]["id"], 3);
  EXPECT_EQ(got[1]["error"]["code"], -32602);
}

// A signal ends the server (CancelAll, then exit): the call under way is cancelled and waited
// for, so that what it started (a run's job, started just before) is stopped before the exit.
TEST(McpServeTest, CancelAllWaitsForTheCallUnderWayToEnd) {
  auto state = std::make_shared<Waiting>();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  Tool slow = Waiter(state);
  slow.call = [inner = slow.call, finished](const json& arguments, Cancellation& cancellation) {
    ToolResult result = inner(arguments, cancellation);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the job's cancel, taking its time
    *finished = true;
    return result;
  };
  Server server("1", "", {slow});
  PipedServe serve(server);
  serve.Send(kWaitCall);
  ASSERT_TRUE(WaitStarted(*state));
  server.CancelAll(std::chrono::seconds(10));
  EXPECT_TRUE(state->stopped);
  EXPECT_TRUE(*finished) << "CancelAll returned before the call under way ended";
  EXPECT_EQ(serve.Finish(), "");  // a cancelled call gets no answer
}

}  // namespace
}  // namespace sandboxctl::mcp
