#include "helper_clients/helper_client.h"

#include <sys/wait.h>

#include "base/errors.h"
#include "base/process.h"
#include "model/change_json.h"
#include "model/helper_request.h"

namespace sandboxd {

namespace {

/// Text operations are sandboxd-text-helper's, which lives beside sandboxd-helper.
std::string HelperFor(const std::string& helper_path, HelperOp op) {
  return IsTextHelperOp(op) ? BesideHelper(helper_path, "sandboxd-text-helper") : helper_path;
}

}  // namespace

std::string BesideHelper(const std::string& helper_path, const std::string& program) {
  size_t slash = helper_path.rfind('/');
  return (slash == std::string::npos ? std::string() : helper_path.substr(0, slash + 1)) + program;
}

nlohmann::json HelperPrograms::Run(HelperOp op, const UserCredentials& user, const nlohmann::json& request, const std::vector<int>& fds) {
  SpawnOptions options;
  options.path = HelperFor(helper_path_, op);
  options.argv = {options.path, std::string(ToString(op))};
  options.env = {"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8"};
  options.user = user;
  options.cwd = "/";
  options.die_with_parent = true;
  for (size_t i = 0; i < fds.size(); ++i) options.fds.push_back({static_cast<int>(3 + i), fds[i]});
  RunResult result = RunAndCapture(options, HelperMessageBytes(request));
  auto answer = ReadHelperMessage(result.out);
  if (answer.is_object() && answer.contains("error")) {
    const auto& error = answer["error"];
    throw Error(CodeFromDBusName(error.value("name", "")), error.value("message", "sandboxd-helper failed"));
  }
  if (!WIFEXITED(result.status) || WEXITSTATUS(result.status) != 0 || !answer.is_object()) {
    std::string detail = result.err.empty() ? "exit status " + std::to_string(ExitStatusFromWaitStatus(result.status)) : result.err;
    while (!detail.empty() && detail.back() == '\n') detail.pop_back();
    throw Error(Code::kFailed, "sandboxd-helper " + std::string(ToString(op)) + " failed: " + detail);
  }
  return answer;
}

namespace {

/// {PATH: ["2", "2.1"], ...} (helper_request.cpp reads it).
nlohmann::json OnlyHunksJson(const std::map<std::string, std::set<api::HunkRef>>& only) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [path, refs] : only)
    for (const auto& ref : refs) json[path].push_back(api::ToString(ref));
  return json;
}

/// A request of `op` about `roots`, whose fds go into `fds` (numbered from 3 in the helper).
nlohmann::json RootsRequest(HelperOp op, const std::vector<HelperRoot>& roots, std::vector<int>& fds) {
  nlohmann::json request = {{"op", ToString(op)}, {"roots", nlohmann::json::array()}};
  for (const auto& root : roots) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& change : root.changes) changes.push_back(ChangeToJson(change));
    int first = static_cast<int>(3 + fds.size());
    fds.push_back(root.live_fd);
    fds.push_back(root.upper_fd);
    nlohmann::json renames = nlohmann::json::array();
    for (const auto& rename : root.renames) renames.push_back({rename.from, rename.to});
    request["roots"].push_back(
        {{"live_fd", first}, {"upper_fd", first + 1}, {"prefix", root.prefix}, {"changes", changes}, {"renames", renames},
         {"only_hunks", OnlyHunksJson(root.only_hunks)}, {"binary", root.binary}});
  }
  return request;
}

/// The fields of a request that pick hunks and parts (text_operations.cpp, PickOf).
void PutPick(nlohmann::json& request, const HunkPick& pick) {
  request["hunks"] = pick.hunks;
  if (!pick.parts.empty()) request["parts"] = pick.parts;
}

}  // namespace

nlohmann::json RunHelper(OwnerHelpers& helpers, HelperOp op, const UserCredentials& user,
                         const std::vector<HelperRoot>& roots, int output_fd, int64_t output_stall_ms) {
  std::vector<int> fds;
  nlohmann::json request = RootsRequest(op, roots, fds);
  if (output_fd >= 0) {
    request["output_fd"] = static_cast<int>(3 + fds.size());
    fds.push_back(output_fd);
    if (output_stall_ms > 0) request["output_stall_ms"] = output_stall_ms;
  }
  return helpers.Run(op, user, request, fds);
}

void RunStepsHelper(OwnerHelpers& helpers, const UserCredentials& user, StepDirection direction,
                    const std::vector<StepHelperRoot>& roots, const std::vector<CommitStep>& steps, bool sync) {
  nlohmann::json request = {
      {"direction", ToString(direction)}, {"roots", nlohmann::json::array()}, {"sync", sync}};
  std::vector<int> fds;
  for (const auto& root : roots) {
    int first = static_cast<int>(3 + fds.size());
    fds.insert(fds.end(), {root.live_fd, root.upper_fd, root.removed_fd});
    request["roots"].push_back({{"live_fd", first}, {"upper_fd", first + 1}, {"removed_fd", first + 2}});
  }
  std::string packed = PackSteps(steps);
  request["steps"] = nlohmann::json::binary(std::vector<uint8_t>(packed.begin(), packed.end()));
  helpers.Run(HelperOp::kSteps, user, request, fds);
}

std::vector<std::map<std::string, HunkShape>> CountHunksAsOwner(OwnerHelpers& helpers, const UserCredentials& user,
                                                                      const std::vector<HelperRoot>& roots, bool with_parts) {
  std::vector<int> fds;
  nlohmann::json request = RootsRequest(HelperOp::kHunks, roots, fds);
  request["with_parts"] = with_parts;
  nlohmann::json answer = helpers.Run(HelperOp::kHunks, user, request, fds);
  std::vector<std::map<std::string, HunkShape>> shapes;
  for (const auto& root : answer.at("roots")) {
    auto& shape = shapes.emplace_back();
    for (const auto& [path, count] : root.at("counts").get<std::map<std::string, int>>()) shape[path].hunks = count;
    if (with_parts && root.contains("parts"))
      for (const auto& [path, parts] : root.at("parts").get<std::map<std::string, std::vector<int>>>()) shape[path].parts = parts;
  }
  if (shapes.size() != roots.size()) throw Error(Code::kFailed, "sandboxd-helper hunks answered for the wrong number of roots");
  return shapes;
}

void MergeHunksAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd, int upper_fd,
                       const std::string& path, const HunkPick& pick, int output_fd) {
  nlohmann::json request = {{"live_fd", 3}, {"upper_fd", 4}, {"output_fd", 5}, {"path", path}};
  PutPick(request, pick);
  helpers.Run(HelperOp::kMerge, user, request, {live_fd, upper_fd, output_fd});
}

std::vector<int> ShapeLeftAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd, int upper_fd,
                                  const std::string& path, const HunkPick& pick) {
  nlohmann::json request = {{"live_fd", 3}, {"upper_fd", 4}, {"path", path}};
  PutPick(request, pick);
  return helpers.Run(HelperOp::kLeft, user, request, {live_fd, upper_fd}).at("parts").get<std::vector<int>>();
}

std::set<std::string> SameContentAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd,
                                         int upper_fd, const std::vector<std::string>& paths) {
  nlohmann::json request = {{"live_fd", 3}, {"upper_fd", 4}, {"paths", paths}};
  nlohmann::json answer = helpers.Run(HelperOp::kCompare, user, request, {live_fd, upper_fd});
  return answer.at("same").get<std::set<std::string>>();
}

std::vector<std::string> DigestsAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int upper_fd,
                                        const std::vector<std::string>& paths) {
  nlohmann::json request = {{"upper_fd", 3}, {"paths", paths}};
  auto digests = helpers.Run(HelperOp::kDigest, user, request, {upper_fd}).at("digests").get<std::vector<std::string>>();
  if (digests.size() != paths.size()) throw Error(Code::kFailed, "sandboxd-helper digested the wrong number of files");
  return digests;
}

std::vector<StagedRead> StagedDigestsAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int dir_fd,
                                             const std::vector<std::string>& paths) {
  nlohmann::json request = {{"live_fd", 3}, {"paths", paths}};
  const nlohmann::json answer = helpers.Run(HelperOp::kStaged, user, request, {dir_fd}).at("staged");
  if (answer.size() != paths.size()) throw Error(Code::kFailed, "sandboxd-text-helper read the wrong number of git indexes");
  std::vector<StagedRead> read;
  for (const auto& one : answer)
    read.push_back({one.at("digest").get<std::string>(), static_cast<ino_t>(one.at("ino").get<uint64_t>()), one.at("ctime_ns").get<int64_t>()});
  return read;
}

nlohmann::json GitSummaryAsOwner(OwnerHelpers& helpers, const UserCredentials& user, int live_fd, int upper_fd, const std::string& git_dir) {
  nlohmann::json request = {{"live_fd", 3}, {"upper_fd", 4}, {"git_dir", git_dir}};
  return helpers.Run(HelperOp::kGit, user, request, {live_fd, upper_fd});
}

std::vector<std::vector<Rename>> ConfirmRenamesAsOwner(OwnerHelpers& helpers, const UserCredentials& user,
                                                       const std::vector<RenameRoot>& roots) {
  nlohmann::json request = {{"roots", nlohmann::json::array()}};
  std::vector<int> fds;
  for (const auto& root : roots) {
    int first = static_cast<int>(3 + fds.size());
    fds.push_back(root.live_fd);
    fds.push_back(root.upper_fd);
    request["roots"].push_back({{"live_fd", first}, {"upper_fd", first + 1}, {"candidates", root.candidates}});
  }
  auto answer = helpers.Run(HelperOp::kRenames, user, request, fds);
  std::vector<std::vector<Rename>> renames;
  for (const auto& root : answer.at("roots")) {
    renames.emplace_back();
    for (const auto& pair : root.at("renames")) renames.back().push_back({pair.at(0).get<std::string>(), pair.at(1).get<std::string>()});
  }
  if (renames.size() != roots.size()) throw Error(Code::kFailed, "sandboxd-helper renames answered for the wrong number of roots");
  return renames;
}

}  // namespace sandboxd
