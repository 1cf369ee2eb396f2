// sandboxd-helper: the unprivileged half of sandboxd. sandboxd execs it already running as a
// sandbox's owner (uid, gid, groups dropped; no_new_privs), with directory fds of the live
// roots and upper layers, and a JSON request on stdin. Everything it reads or writes in users'
// trees is therefore checked by the kernel against the owner's rights. It answers one JSON
// object on stdout; an error is {"error": {"name": D-Bus error name, "message": ...}}.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "change_json.h"
#include "commit_apply.h"
#include "commit_steps_apply.h"
#include "diff_writer.h"
#include "errors.h"
#include "hunk_merge.h"
#include "renames.h"
#include "same_content.h"
#include "text_file.h"

namespace {

using sandboxd::Change;
using sandboxd::Code;
using sandboxd::Error;

struct RootRequest {
  int live_fd = -1;
  int upper_fd = -1;
  std::string prefix;
  std::vector<Change> changes;
  std::vector<sandboxd::Rename> renames;
};

std::vector<RootRequest> ParseRoots(const nlohmann::json& request) {
  std::vector<RootRequest> roots;
  for (const auto& root : request.at("roots")) {
    RootRequest r;
    r.live_fd = root.at("live_fd").get<int>();
    r.upper_fd = root.at("upper_fd").get<int>();
    r.prefix = root.at("prefix").get<std::string>();
    for (const auto& change : root.at("changes")) r.changes.push_back(sandboxd::ChangeFromJson(change));
    for (const auto& pair : root.value("renames", nlohmann::json::array()))
      r.renames.push_back({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
    roots.push_back(std::move(r));
  }
  return roots;
}

nlohmann::json Diff(const nlohmann::json& request) {
  int out = request.at("output_fd").get<int>();
  for (const auto& root : ParseRoots(request)) {
    sandboxd::DiffOptions options;
    options.path_prefix = root.prefix;
    if (!sandboxd::WriteDiff(root.changes, root.live_fd, root.upper_fd, options, out, root.renames)) break;  // reader went away
  }
  return {{"ok", true}};
}

/// Files larger than this have no hunks, exactly as `diff` shows them as binary.
const size_t kMaxTextBytes = sandboxd::DiffOptions{}.max_text_bytes;

/// {"roots": [{"counts": {PATH: hunks, ...}}, ...]}: for each change, how many hunks `diff` shows
/// for it when it can be committed hunk by hunk, else -1 (it can only be approved whole).
nlohmann::json Hunks(const nlohmann::json& request) {
  nlohmann::json answer_roots = nlohmann::json::array();
  for (const auto& root : ParseRoots(request)) {
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& change : root.changes) {
      int count = -1;
      if (sandboxd::MayHaveHunks(change)) {
        if (auto text = sandboxd::ReadTextModification(root.live_fd, root.upper_fd, change.path, kMaxTextBytes))
          count = static_cast<int>(sandboxd::CountHunks(text->old_text, text->new_text));
      }
      counts[change.path] = count;
    }
    answer_roots.push_back({{"counts", counts}});
  }
  return {{"roots", answer_roots}};
}

void WriteMerged(int fd, const std::string& text, const std::string& path) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
    throw Error(Code::kInvalidArgument, "the output for the hunks of " + path + " is not an empty regular file");
  size_t done = 0;
  while (done < text.size()) {
    ssize_t put = write(fd, text.data() + done, text.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) sandboxd::ThrowErrno("cannot write the approved hunks of " + path);
    done += static_cast<size_t>(put);
  }
  if (fsync(fd) != 0) sandboxd::ThrowErrno("cannot sync the approved hunks of " + path);
}

/// Writes the live file with only the approved hunks of the sandbox's version applied to
/// output_fd (an empty file the daemon made), synced, for the daemon to rename into place.
nlohmann::json Merge(const nlohmann::json& request) {
  int live_fd = request.at("live_fd").get<int>();
  int upper_fd = request.at("upper_fd").get<int>();
  int output_fd = request.at("output_fd").get<int>();
  auto path = request.at("path").get<std::string>();
  auto approved = request.at("hunks").get<std::set<int>>();
  std::string why_not;
  auto text = sandboxd::ReadTextModification(live_fd, upper_fd, path, kMaxTextBytes, &why_not);
  if (!text) throw Error(Code::kInvalidArgument, "cannot commit single hunks of " + path + ": " + why_not);
  std::string merged;
  try {
    merged = sandboxd::ApplyHunks(text->old_text, text->new_text, approved);
  } catch (const Error& e) {
    throw Error(e.code(), path + ": " + e.what());
  }
  WriteMerged(output_fd, merged, path);
  return {{"ok", true}};
}

/// {"same": [PATH, ...]}: the paths whose live and sandbox entries have the same content.
nlohmann::json Compare(const nlohmann::json& request) {
  int live_fd = request.at("live_fd").get<int>();
  int upper_fd = request.at("upper_fd").get<int>();
  nlohmann::json same = nlohmann::json::array();
  for (const auto& path : request.at("paths"))
    if (sandboxd::SameContent(live_fd, upper_fd, path.get<std::string>())) same.push_back(path);
  return {{"same", same}};
}

/// {"roots": [{"renames": [[FROM, TO], ...]}, ...]}: of each root's candidates, the renames whose
/// contents are identical.
nlohmann::json Renames(const nlohmann::json& request) {
  nlohmann::json answer_roots = nlohmann::json::array();
  for (const auto& root : request.at("roots")) {
    auto candidates = root.at("candidates").get<sandboxd::RenameCandidates>();
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& rename : sandboxd::ConfirmRenames(root.at("live_fd").get<int>(), root.at("upper_fd").get<int>(), candidates))
      pairs.push_back({rename.from, rename.to});
    answer_roots.push_back({{"renames", pairs}});
  }
  return {{"roots", answer_roots}};
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
    std::cerr << "usage: sandboxd-helper diff|hunks|merge|compare|renames|commit|steps < request.json (started by sandboxd only)\n";
    return 2;
  }
  std::string op = argv[1];
  try {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    auto request = nlohmann::json::parse(input);
    nlohmann::json answer;
    if (op == "diff") {
      answer = Diff(request);
    } else if (op == "hunks") {
      answer = Hunks(request);
    } else if (op == "merge") {
      answer = Merge(request);
    } else if (op == "compare") {
      answer = Compare(request);
    } else if (op == "renames") {
      answer = Renames(request);
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
