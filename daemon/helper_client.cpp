#include "helper_client.h"

#include <sys/wait.h>

#include "change_json.h"
#include "errors.h"
#include "process.h"

namespace sandboxd {

nlohmann::json RunHelper(const std::string& helper_path, const std::string& op, const UserCredentials& user,
                         const std::vector<HelperRoot>& roots, int output_fd) {
  SpawnOptions options;
  options.path = helper_path;
  options.argv = {helper_path, op};
  options.env = {"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"};
  options.user = user;
  options.cwd = "/";
  nlohmann::json request = {{"op", op}, {"roots", nlohmann::json::array()}};
  int next_fd = 3;
  for (const auto& root : roots) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& change : root.changes) changes.push_back(ChangeToJson(change));
    options.fds.push_back({next_fd, root.live_fd});
    options.fds.push_back({next_fd + 1, root.upper_fd});
    request["roots"].push_back({{"live_fd", next_fd}, {"upper_fd", next_fd + 1}, {"prefix", root.prefix}, {"changes", changes}});
    next_fd += 2;
  }
  if (output_fd >= 0) {
    options.fds.push_back({next_fd, output_fd});
    request["output_fd"] = next_fd;
  }
  RunResult result = RunAndCapture(options, request.dump());
  auto answer = nlohmann::json::parse(result.out, nullptr, false);
  if (answer.is_object() && answer.contains("error")) {
    const auto& error = answer["error"];
    throw Error(CodeFromDBusName(error.value("name", "")), error.value("message", "sandboxd-helper failed"));
  }
  if (!WIFEXITED(result.status) || WEXITSTATUS(result.status) != 0 || !answer.is_object()) {
    std::string detail = result.err.empty() ? "exit status " + std::to_string(ExitStatusFromWaitStatus(result.status)) : result.err;
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    throw Error(Code::kFailed, "sandboxd-helper " + op + " failed: " + detail);
  }
  return answer;
}

}  // namespace sandboxd
