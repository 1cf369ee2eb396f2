// sandboxctl mcp as an agent host uses it: the official MCP TypeScript SDK's client
// (tests/mcp/client_test.mjs, installed by tests/run with npm ci) drives every tool over stdio
// as an unprivileged user, against the real daemon; and raw lines a broken or lying client
// might send get JSON-RPC errors, never a crash or silence. The live tree stays as it was: no
// tool commits.

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
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

// A write larger than write_file takes, and a path with "..", are refused by name, nothing
// is written, and the server answers the next line.
TEST(McpTest, AHugeWriteAndAPathOutOfTheRootAreRefused) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  auto call = [](int id, const std::string& tool, const json& arguments) {
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", arguments}}}}.dump() + "\n";
  };
  std::string input = call(1, "sandbox_open", json::object()) + call(2, "write_file", {{"path", "huge"}, {"content", std::string(20u << 20, 'x')}}) +
                      call(3, "write_file", {{"path", "sub/../../escaped"}, {"content", "x"}}) +
                      call(4, "read_file", {{"path", "../" + project.substr(project.rfind('/') + 1) + "/a.txt"}}) +
                      call(5, "write_file", {{"path", "small"}, {"content", "ok"}}) + "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}\n";
  Result mcp = World().Sandboxctl(kAlice, {"mcp"}, {.input = input, .cwd = project, .timeout = std::chrono::seconds(120)});
  EXPECT_EQ(mcp.status, 0) << mcp.err;
  std::map<int, json> answers;
  std::istringstream lines(mcp.out);
  for (std::string line; std::getline(lines, line);) {
    json answer = json::parse(line, nullptr, false);
    ASSERT_FALSE(answer.is_discarded()) << "not JSON on stdout: " << line.substr(0, 200);
    answers[answer["id"].get<int>()] = answer;
  }
  ASSERT_EQ(answers.size(), 6u) << mcp.out.substr(0, 2000);
  auto said = [&](int id) { return answers[id]["result"]["content"][0]["text"].get<std::string>(); };
  EXPECT_EQ(answers[2]["result"]["isError"], true);
  EXPECT_NE(said(2).find("huge is 20971520 bytes; write_file writes at most 16 MiB"), std::string::npos) << said(2);
  EXPECT_EQ(answers[3]["result"]["isError"], true);
  EXPECT_NE(said(3).find("leads out of the sandbox's root"), std::string::npos) << said(3);
  EXPECT_EQ(answers[4]["result"]["isError"], true);
  EXPECT_EQ(answers[5]["result"]["isError"], false) << said(5);
  EXPECT_TRUE(answers[6]["result"].is_object());
  std::string id = answers[1]["result"]["structuredContent"]["sandbox"];
  Result changes = World().Sandboxctl(kAlice, {"changes", id});
  EXPECT_EQ(changes.out, "A small\n") << changes.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// The server lives long, and the person acts meanwhile: a sandbox named in a call is looked up
// at that call (a name given to a new sandbox names the new one), and the sandbox the server
// opened, once destroyed, is refused by the daemon's NotFound naming it.
TEST(McpTest, SandboxesAreLookedUpAtEachCall) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  std::string other = World().MakeProject(kAlice);
  Result made = World().Sandboxctl(kAlice, {"create", "--name", "mcp-named", other});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string out = project + "/../mcp-names.out";
  std::string fifo = project + "/../mcp-names.in";
  std::string ctl = std::string(SANDBOXCTL_BIN) + " --no-ask-password";
  auto line = [](int id, const std::string& tool, const std::string& arguments) {
    return "'{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool +
           "\",\"arguments\":" + arguments + "}}'";
  };
  auto answered = [&](int count) {
    return "for i in $(seq 300); do [ $(wc -l < '" + out + "') -ge " + std::to_string(count) + " ] && break; sleep 0.1; done; ";
  };
  std::string script =
      "mkfifo '" + fifo + "'; " + ctl + " mcp < '" + fifo + "' > '" + out + "' & server=$!; exec 3> '" + fifo + "'; " +
      "printf '%s\\n' " + line(1, "changes", "{\"sandbox\":\"mcp-named\"}") + " >&3; " + answered(1) +
      ctl + " destroy mcp-named && " + ctl + " create --name mcp-named '" + project + "' > /dev/null; " +
      "printf '%s\\n' " + line(2, "run", "{\"sandbox\":\"mcp-named\",\"command\":[\"pwd\"]}") + " >&3; " + answered(2) +
      ctl + " destroy mcp-named; " +
      "printf '%s\\n' " + line(3, "sandbox_open", "{}") + " >&3; " + answered(3) +
      "id=$(sed -n 3p '" + out + "' | sed 's/.*\"sandbox\":\"\\([0-9a-f]*\\)\".*/\\1/'); " + ctl + " destroy $id; " +
      "printf '%s\\n' " + line(4, "changes", "{}") + " >&3; " + answered(4) +
      "exec 3>&-; wait $server; rm -f '" + fifo + "'";
  Result session = World().RunAs(kAlice, {"sh", "-c", script}, {.cwd = project, .timeout = std::chrono::seconds(120)});
  EXPECT_EQ(session.status, 0) << session.out << session.err;
  std::map<int, json> answers;
  std::istringstream lines(World().RunAs(kAlice, {"cat", out}).out);
  for (std::string text; std::getline(lines, text);) {
    json answer = json::parse(text, nullptr, false);
    ASSERT_FALSE(answer.is_discarded()) << text;
    answers[answer["id"].get<int>()] = answer;
  }
  World().RunAs(kAlice, {"rm", "-f", out});
  ASSERT_EQ(answers.size(), 4u) << session.err;
  EXPECT_EQ(answers[1]["result"]["isError"], false) << answers[1].dump();
  // The new sandbox of that name, over the project: its job ran there.
  EXPECT_EQ(answers[2]["result"]["isError"], false) << answers[2].dump();
  EXPECT_EQ(answers[2]["result"]["structuredContent"]["output"], project + "\n") << answers[2].dump();
  std::string id = answers[3]["result"]["structuredContent"]["sandbox"];
  ASSERT_FALSE(id.empty()) << answers[3].dump();
  EXPECT_EQ(answers[4]["result"]["isError"], true) << answers[4].dump();
  std::string refusal = answers[4]["result"]["content"][0]["text"];
  EXPECT_NE(refusal.find("org.sandboxd.Sandbox1.Error.NotFound"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find(id), std::string::npos) << refusal;
}

/// A `sandboxctl mcp` of alice's whose input the test holds (a fifo) and whose answers it reads
/// as they come (a file), for sessions the test acts in between.
class McpSession {
 public:
  explicit McpSession(const std::string& dir) : in_(dir + "/../mcp-session.in"), out_(dir + "/../mcp-session.out") {
    EXPECT_EQ(World().RunAs(kAlice, {"mkfifo", in_}).status, 0);
    // Started in the background: its streams are the file and the fifo, none of the RunAs pipes,
    // which the shell lets go of first (the child's open of the fifo waits for our end, and the
    // shell's own copies of them would make RunAs wait for it).
    World().RunAs(kAlice, {"sh", "-c", "exec >/dev/null 2>&1; " + std::string(SANDBOXCTL_BIN) + " mcp > '" + out_ + "' < '" + in_ + "' &"},
                  {.cwd = dir});
    fd_ = open(in_.c_str(), O_WRONLY | O_CLOEXEC);  // waits for the server to open its end
    EXPECT_GE(fd_, 0);
  }
  ~McpSession() {
    if (fd_ >= 0) close(fd_);
    World().RunAs(kAlice, {"rm", "-f", in_, out_});
  }
  /// Calls `tool` and returns its answer (waiting up to 60 s for it).
  json Call(const std::string& tool, const json& arguments) {
    ++id_;
    std::string line = json{{"jsonrpc", "2.0"}, {"id", id_}, {"method", "tools/call"}, {"params", {{"name", tool}, {"arguments", arguments}}}}.dump() + "\n";
    EXPECT_EQ(write(fd_, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    for (int i = 0; i < 600; ++i) {
      std::ifstream answers(out_);
      for (std::string text; std::getline(answers, text);) {
        json answer = json::parse(text, nullptr, false);
        if (!answer.is_discarded() && answer["id"] == id_) return answer;
      }
      usleep(100 * 1000);
    }
    ADD_FAILURE() << "no answer to " << tool;
    return json();
  }

 private:
  std::string in_, out_;
  int fd_ = -1;
  int id_ = 0;
};

// The daemon restarts (a crash, an update, an idle exit and activation) under a server that
// lives on: the sandbox it opened is still the one its tools act on.
TEST(McpTest, TheServerOutlivesADaemonRestart) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  McpSession session(project);
  json opened = session.Call("sandbox_open", json::object());
  ASSERT_EQ(opened["result"]["isError"], false) << opened.dump();
  std::string id = opened["result"]["structuredContent"]["sandbox"];
  json ran = session.Call("run", {{"command", {"sh", "-c", "echo kept > kept.txt"}}});
  ASSERT_EQ(ran["result"]["structuredContent"]["exit_status"], 0) << ran.dump();

  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();

  json changes = session.Call("changes", json::object());
  EXPECT_EQ(changes["result"]["isError"], false) << changes.dump();
  EXPECT_NE(changes["result"]["content"][0]["text"].get<std::string>().find("A kept.txt"), std::string::npos) << changes.dump();
  json again = session.Call("run", {{"command", {"cat", "kept.txt"}}});
  EXPECT_EQ(again["result"]["structuredContent"]["output"], "kept\n") << again.dump();
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
}

// The agent asks for a review and reads what the owner decided, with the notes they left: the
// notes and the open request are kept across a daemon restart, a suspend and a resume (state
// that must survive is checked in every way it is kept); the agent's words reach the owner's
// terminal with no byte that could steer it; the owner's next act answers the request.
TEST(McpTest, NotesAndAReviewRequestSurviveARestartAndASuspend) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  Result made = World().Sandboxctl(kAlice, {"create", "--name", "notes", project});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string id = made.out.substr(0, made.out.find('\n'));
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo b > b.txt; echo changed > a.txt"}).status, 0);

  Result rejected = World().Sandboxctl(kAlice, {"reject", id, "b.txt", "--note", "no new files, please"});
  ASSERT_EQ(rejected.status, 0) << rejected.err;
  Result too_long = World().Sandboxctl(kAlice, {"reject", id, "b.txt", "--note", std::string(5000, 'x')});
  EXPECT_EQ(too_long.status, 1);
  EXPECT_NE(too_long.err.find("a decision's note takes at most 4096 bytes, not 5000 (sandbox " + id + ")"), std::string::npos) << too_long.err;
  EXPECT_EQ(World().Sandboxctl(kAlice, {"reject", id, "b.txt", "--note", ""}).status, 2);

  McpSession session(project);
  json asked = session.Call("request_review", {{"message", "done: see a.txt \x1b]0;owned\x07"}, {"sandbox", "notes"}});
  ASSERT_EQ(asked["result"]["isError"], false) << asked.dump();

  auto check_kept = [&](const std::string& when) {
    Result show = World().Sandboxctl(kAlice, {"show", id});
    EXPECT_EQ(show.status, 0) << when << show.err;
    EXPECT_NE(show.out.find("Review asked: "), std::string::npos) << when << show.out;
    EXPECT_NE(show.out.find("done: see a.txt "), std::string::npos) << when << show.out;
    EXPECT_EQ(show.out.find('\x1b'), std::string::npos) << when << ": the agent's ESC reached the terminal";
    EXPECT_EQ(show.out.find('\x07'), std::string::npos) << when;
    json status = session.Call("review_status", {{"sandbox", id}});
    EXPECT_EQ(status["result"]["isError"], false) << when << status.dump();
    const std::string text = status["result"]["content"][0]["text"];
    if (when != "while suspended") {
      EXPECT_NE(text.find("rejected M b.txt"), std::string::npos) << when << text;
    } else {
      EXPECT_NE(text.find("it is suspended: its changes are archived"), std::string::npos) << text;
    }
    EXPECT_NE(text.find("the owner rejected b.txt: \"no new files, please\""), std::string::npos) << when << text;
    EXPECT_NE(text.find("waits for the owner"), std::string::npos) << when << text;
    EXPECT_EQ(status["result"]["structuredContent"]["review_requested"]["message"], "done: see a.txt \x1b]0;owned\x07") << when;
  };
  check_kept("at first");
  World().KillDaemon();
  ASSERT_TRUE(World().StartDaemon()) << World().DaemonLog();
  check_kept("after a restart");
  ASSERT_EQ(World().Sandboxctl(kAlice, {"suspend", id}).status, 0);
  check_kept("while suspended");
  ASSERT_EQ(World().Sandboxctl(kAlice, {"resume", id}).status, 0);
  check_kept("after a resume");

  // The owner acts: the request is answered, and the agent reads the new decision and its note.
  ASSERT_EQ(World().Sandboxctl(kAlice, {"approve", id, "a.txt", "--note", "good"}).status, 0);
  Result show = World().Sandboxctl(kAlice, {"show", id});
  EXPECT_EQ(show.out.find("Review asked"), std::string::npos) << show.out;
  json status = session.Call("review_status", {{"sandbox", id}});
  const std::string text = status["result"]["content"][0]["text"];
  EXPECT_NE(text.find("approved M a.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("the owner approved a.txt: \"good\""), std::string::npos) << text;
  EXPECT_EQ(text.find("waits for the owner"), std::string::npos) << text;
  EXPECT_FALSE(status["result"]["structuredContent"].contains("review_requested")) << status.dump();
  EXPECT_EQ(World().Sandboxctl(kAlice, {"destroy", id}).status, 0);
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
