// sandboxctl mcp as an agent host uses it: the official MCP TypeScript SDK's client
// (tests/mcp/client_test.mjs, installed by tests/run with npm ci) drives every tool over stdio
// as an unprivileged user, against the real daemon; and raw lines a broken or lying client
// might send get JSON-RPC errors, never a crash or silence. The live tree stays as it was: no
// tool commits.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace sandboxd::it {
namespace {

using nlohmann::json;

const std::string kClientDir = std::string(SANDBOXD_SOURCE_DIR) + "/tests/mcp";

bool SdkInstalled() {
  struct stat st;
  return stat((kClientDir + "/node_modules/@modelcontextprotocol/sdk/package.json").c_str(), &st) == 0;
}

TEST(McpTest, TheSdksClientDrivesEveryToolAndNothingGoesLive) {
  SANDBOXD_REQUIRE_WORLD();
  // Not skipped when missing: a suite that silently left this out would read as green.
  ASSERT_TRUE(SdkInstalled()) << "the MCP SDK is not installed in " << kClientDir
                              << ": tests/run installs it (npm ci --prefix tests/mcp)";
  std::string project = World().MakeProject(kAlice);
  auto before = Snapshot(project);
  Result run = World().RunAs(kAlice, {"node", kClientDir + "/client_test.mjs", SANDBOXCTL_BIN, project},
                             {.cwd = project, .timeout = std::chrono::seconds(180)});
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("mcp client test: all passed"), std::string::npos) << run.out << run.err;
  EXPECT_EQ(Describe(Snapshot(project)), Describe(before)) << "a tool changed the live tree";

  // What the agent did waits in the sandbox for the person.
  std::string id = run.out.substr(run.out.rfind("(sandbox ") + 9);
  id = id.substr(0, id.find(')'));
  ASSERT_FALSE(id.empty()) << run.out;
  Result changes = World().Sandboxctl(kAlice, {"changes", id});
  EXPECT_EQ(changes.status, 0) << changes.err;
  EXPECT_NE(changes.out.find("M a.txt"), std::string::npos) << changes.out;
  EXPECT_NE(changes.out.find("A new.txt"), std::string::npos) << changes.out;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

TEST(McpTest, RawLinesFromABrokenClientGetJsonRpcErrors) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  std::string input =
      "{not json\n"
      "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"destroy\",\"arguments\":{}}}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"run\",\"arguments\":{\"command\":[\"true\"],\"cwd\":\"..\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_open\",\"arguments\":{\"path\":\"/nonexistent\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n";
  Result mcp = World().Sandboxctl(kAlice, {"mcp"}, {.input = input, .cwd = project});
  EXPECT_EQ(mcp.status, 0) << mcp.err;
  // Tool calls are answered when they are done, the rest at once: by id, and the answers
  // with no id (lines that had none to give) in order.
  std::map<int, json> answers;
  std::vector<json> anonymous;
  std::istringstream lines(mcp.out);
  for (std::string line; std::getline(lines, line);) {
    json answer = json::parse(line, nullptr, false);
    ASSERT_FALSE(answer.is_discarded()) << "not JSON on stdout: " << line;
    if (answer["id"].is_null())
      anonymous.push_back(answer);
    else
      answers[answer["id"].get<int>()] = answer;
  }
  ASSERT_EQ(anonymous.size(), 2u) << mcp.out;
  EXPECT_EQ(anonymous[0]["error"]["code"], -32700);
  EXPECT_EQ(anonymous[1]["error"]["code"], -32600);
  ASSERT_EQ(answers.size(), 5u) << mcp.out;  // one per request; none for the notification
  EXPECT_EQ(answers[2]["error"]["code"], -32601);
  EXPECT_EQ(answers[3]["error"]["code"], -32602);
  EXPECT_EQ(answers[4]["result"]["isError"], true);  // no sandbox open yet, and ".." besides
  EXPECT_EQ(answers[5]["result"]["isError"], true);
  EXPECT_NE(answers[5]["result"]["content"][0]["text"].get<std::string>().find("/nonexistent"), std::string::npos);
  EXPECT_TRUE(answers[6]["result"].is_object());
  // Nothing was made for a client that never opened a sandbox.
  Result list = World().Sandboxctl(kAlice, {"list"});
  EXPECT_EQ(list.out.find(project), std::string::npos) << list.out;
}

// A host stops its server with SIGTERM (after closing its input) or Ctrl-C: a run the server
// waits for is cancelled with it, not left running in the daemon for no one.
TEST(McpTest, AServerStoppedByASignalCancelsTheRunItWaitsFor) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  std::string out = project + "/../mcp-signal.out";
  std::string fifo = project + "/../mcp-signal.in";
  // The server's input held open (fd 3) until it is stopped, as a host holds it.
  std::string script =
      "mkfifo '" + fifo + "'; " + std::string(SANDBOXCTL_BIN) + " mcp < '" + fifo + "' > '" + out + "' & server=$!; "
      "exec 3> '" + fifo + "'; printf '%s\\n' "
      "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"sandbox_open\",\"arguments\":{}}}' "
      "'{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"run\",\"arguments\":{\"command\":[\"sleep\",\"300\"]}}}' >&3; "
      // Until the run has started (the open answered, and a moment for the job).
      "for i in $(seq 100); do [ -s '" + out + "' ] && break; sleep 0.1; done; sleep 1; "
      "kill -TERM $server; wait $server; echo \"status $?\"; exec 3>&-; rm -f '" + fifo + "'";
  Result stopped = World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = project, .timeout = std::chrono::seconds(120)});
  EXPECT_NE(stopped.out.find("status 143"), std::string::npos) << stopped.out << stopped.err;  // 128 + SIGTERM
  Result answers = World().RunAs(kAlice, {"cat", out});
  json opened = json::parse(answers.out.substr(0, answers.out.find('\n')), nullptr, false);
  ASSERT_FALSE(opened.is_discarded()) << answers.out;
  std::string id = opened["result"]["structuredContent"]["sandbox"];
  // The job was cancelled (within a few seconds, not after its 300).
  json jobs;
  for (int i = 0; i < 50; ++i) {
    Result listed = World().Sandboxctl(kAlice, {"--json", "jobs", id});
    jobs = json::parse(listed.out, nullptr, false);
    ASSERT_FALSE(jobs.is_discarded()) << listed.out << listed.err;
    if (!jobs.empty() && jobs[0]["state"] != "running") break;
    usleep(100 * 1000);
  }
  ASSERT_EQ(jobs.size(), 1u) << jobs.dump();
  EXPECT_EQ(jobs[0]["state"], "finished") << jobs.dump();
  EXPECT_EQ(jobs[0]["reason"], "cancelled") << jobs.dump();
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
  World().RunAs(kAlice, {"rm", "-f", out});
}

}  // namespace
}  // namespace sandboxd::it
