#pragma once
/// ForkedHelpers: the owner-side helpers' operations (helpers/helper_operations.h) run in a
/// forked child of the test, with the request's fds at 3, 4, ... as a helper has them, as the
/// test's own user: no exec, no change of credentials. With it the daemon's code around the
/// helpers (commit runner, landing areas, conflicts, diffs) runs unprivileged and fast in unit
/// tests, on the very operations sandboxd-helper serves.
///
/// It refuses a call for another user than the test's: the code under test must ask for the
/// sandbox's owner, and the test's sandboxes are the test user's.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "base/errors.h"
#include "unique_fd.h"
#include "helpers/helper_operations.h"
#include "helper_clients/owner_helpers.h"

namespace sandboxd::testing {

class ForkedHelpers final : public OwnerHelpers {
 public:
  nlohmann::json Run(HelperOp op, const UserCredentials& user, const nlohmann::json& request, const std::vector<int>& fds) override {
    if (user.uid != geteuid())
      throw Error(Code::kFailed, "ForkedHelpers runs as uid " + std::to_string(geteuid()) + ", asked for uid " + std::to_string(user.uid));
    ++runs_[op];
    const auto& file_ops = FileHelperOperations();
    const auto& text_ops = TextHelperOperations();
    auto found = file_ops.count(op) ? file_ops.find(op) : text_ops.find(op);
    if (found == text_ops.end()) throw Error(Code::kFailed, "no helper operation " + std::string(ToString(op)));
    int answer_pipe[2];
    if (pipe2(answer_pipe, O_CLOEXEC) != 0) ThrowErrno("pipe");
    UniqueFd answer_read(answer_pipe[0]), answer_write(answer_pipe[1]);
    pid_t child = fork();
    if (child < 0) ThrowErrno("fork");
    if (child == 0) Serve(found->second, request, fds, answer_write.get());
    answer_write.reset();
    std::string bytes;
    char buffer[65536];
    for (ssize_t got; (got = read(answer_read.get(), buffer, sizeof buffer)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) ThrowErrno("read the forked helper's answer");
      bytes.append(buffer, static_cast<size_t>(got));
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    nlohmann::json answer = ReadHelperMessage(bytes);
    if (answer.is_object() && answer.contains("error"))
      throw Error(CodeFromDBusName(answer["error"].value("name", "")), answer["error"].value("message", "failed"));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !answer.is_object())
      throw Error(Code::kFailed, "forked helper " + std::string(ToString(op)) + " ended with status " + std::to_string(status));
    return answer;
  }

  /// How many times `op` ran.
  int Runs(HelperOp op) const {
    auto it = runs_.find(op);
    return it == runs_.end() ? 0 : it->second;
  }

 private:
  /// In the child: the fds go to 3, 4, ... (by way of numbers above them all, since a given fd
  /// may sit where another must go), the operation runs, its answer or error goes up the pipe.
  [[noreturn]] static void Serve(const HelperOperation& operation, const nlohmann::json& request, const std::vector<int>& fds, int answer_fd) {
    const int above = 3 + static_cast<int>(fds.size()) + 1024;
    int answer = fcntl(answer_fd, F_DUPFD, above);
    std::vector<int> lifted;
    for (int fd : fds) lifted.push_back(fcntl(fd, F_DUPFD, above));
    for (size_t i = 0; i < lifted.size(); ++i)
      if (lifted[i] < 0 || dup2(lifted[i], 3 + static_cast<int>(i)) < 0) _exit(120);
    std::string bytes;
    try {
      bytes = HelperMessageBytes(operation(request));
    } catch (const Error& e) {
      bytes = HelperMessageBytes({{"error", {{"name", DBusErrorName(e.code())}, {"message", e.what()}}}});
    } catch (const std::exception& e) {
      bytes = HelperMessageBytes({{"error", {{"name", "org.freedesktop.DBus.Error.Failed"}, {"message", e.what()}}}});
    }
    for (size_t done = 0; done < bytes.size();) {
      ssize_t wrote = write(answer, bytes.data() + done, bytes.size() - done);
      if (wrote <= 0) _exit(121);
      done += static_cast<size_t>(wrote);
    }
    _exit(0);
  }

  std::map<HelperOp, int> runs_;
};

}  // namespace sandboxd::testing
