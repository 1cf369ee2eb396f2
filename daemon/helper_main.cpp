// sandboxd-helper: the unprivileged half of sandboxd. sandboxd execs it already running as a
// sandbox's owner (uid, gid, groups dropped; no_new_privs), with directory fds of the live
// roots and upper layers, and a JSON request on stdin. Everything it reads or writes in users'
// trees is therefore checked by the kernel against the owner's rights. It answers one JSON
// object on stdout; an error is {"error": {"name": D-Bus error name, "message": ...}}.

#include <unistd.h>

#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "change_json.h"
#include "commit_apply.h"
#include "commit_steps_apply.h"
#include "diff_writer.h"
#include "errors.h"

namespace {

using sandboxd::Change;
using sandboxd::Code;
using sandboxd::Error;

struct RootRequest {
  int live_fd = -1;
  int upper_fd = -1;
  std::string prefix;
  std::vector<Change> changes;
};

std::vector<RootRequest> ParseRoots(const nlohmann::json& request) {
  std::vector<RootRequest> roots;
  for (const auto& root : request.at("roots")) {
    RootRequest r;
    r.live_fd = root.at("live_fd").get<int>();
    r.upper_fd = root.at("upper_fd").get<int>();
    r.prefix = root.at("prefix").get<std::string>();
    for (const auto& change : root.at("changes")) r.changes.push_back(sandboxd::ChangeFromJson(change));
    roots.push_back(std::move(r));
  }
  return roots;
}

nlohmann::json Diff(const nlohmann::json& request) {
  int out = request.at("output_fd").get<int>();
  for (const auto& root : ParseRoots(request)) {
    sandboxd::DiffOptions options;
    options.path_prefix = root.prefix;
    if (!sandboxd::WriteDiff(root.changes, root.live_fd, root.upper_fd, options, out)) break;  // reader went away
  }
  return {{"ok", true}};
}

nlohmann::json Steps(const nlohmann::json& request) {
  std::vector<sandboxd::StepRoot> roots;
  for (const auto& root : request.at("roots"))
    roots.push_back({root.at("live_fd").get<int>(), root.at("upper_fd").get<int>(), root.at("removed_fd").get<int>()});
  std::vector<sandboxd::CommitStep> steps;
  for (const auto& step : request.at("steps")) steps.push_back(sandboxd::StepFromJson(step));
  std::string direction = request.at("direction").get<std::string>();
  if (direction == "forward") {
    sandboxd::RollForward(steps, roots);
  } else if (direction == "back") {
    sandboxd::RollBack(steps, roots);
  } else {
    throw Error(Code::kInvalidArgument, "unknown direction '" + direction + "'");
  }
  return {{"ok", true}};
}

nlohmann::json Commit(const nlohmann::json& request) {
  size_t applied = 0;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& root : ParseRoots(request)) {
    auto result = sandboxd::ApplyChanges(root.changes, root.live_fd, root.upper_fd);
    applied += result.applied;
    for (const auto& message : result.skipped) skipped.push_back(root.prefix + message);
  }
  return {{"applied", applied}, {"skipped", skipped}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sandboxd-helper diff|commit|steps < request.json (started by sandboxd only)\n";
    return 2;
  }
  std::string op = argv[1];
  try {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    auto request = nlohmann::json::parse(input);
    nlohmann::json answer;
    if (op == "diff") {
      answer = Diff(request);
    } else if (op == "commit") {
      answer = Commit(request);
    } else if (op == "steps") {
      answer = Steps(request);
    } else {
      throw Error(Code::kInvalidArgument, "unknown helper operation '" + op + "'");
    }
    std::cout << answer.dump() << std::endl;
    return 0;
  } catch (const Error& e) {
    std::cout << nlohmann::json{{"error", {{"name", sandboxd::DBusErrorName(e.code())}, {"message", e.what()}}}}.dump() << std::endl;
  } catch (const std::exception& e) {
    std::cout << nlohmann::json{{"error", {{"name", "org.freedesktop.DBus.Error.Failed"}, {"message", e.what()}}}}.dump() << std::endl;
  }
  return 1;
}
