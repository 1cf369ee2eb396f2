// sandboxd-helper: the unprivileged half of sandboxd that moves and compares users' files.
// sandboxd execs it already running as a sandbox's owner (uid, gid, groups dropped;
// no_new_privs), with directory fds of the live roots and upper layers, and a JSON request on
// stdin. Everything it reads or writes in users' trees is therefore checked by the kernel
// against the owner's rights. Diffs and hunks are sandboxd-text-helper's (text_helper_main.cpp):
// kept apart so that this one, started for every commit, does not load libgit2 and the
// libraries it pulls in (a dozen; starting took 19 ms instead of 4).

#include <nlohmann/json.hpp>
#include <string>

#include "base/errors.h"
#include "helpers/landing_actions.h"
#include "helpers/commit_steps_apply.h"
#include "model/helper_request.h"
#include "model/renames.h"
#include "model/same_content.h"

namespace {

using sandboxd::Code;
using sandboxd::Error;

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
  const auto& packed = request.at("steps").get_binary();
  std::vector<sandboxd::CommitStep> steps =
      sandboxd::UnpackSteps(std::string_view(reinterpret_cast<const char*>(packed.data()), packed.size()));
  std::string name = request.at("direction").get<std::string>();
  bool sync = request.at("sync").get<bool>();
  auto direction = sandboxd::StepDirectionFromString(name);
  if (!direction) throw Error(Code::kInvalidArgument, "unknown direction '" + name + "'");
  switch (*direction) {
    case sandboxd::StepDirection::kForward:
      sandboxd::RollForward(steps, roots, sync);
      break;
    case sandboxd::StepDirection::kBack:
      sandboxd::RollBack(steps, roots, sync);
      break;
  }
  return {{"ok", true}};
}

/// Makes, fills and removes a landing area (landing_area.h) in a live root, as the owner.
nlohmann::json Landing(const nlohmann::json& request) {
  sandboxd::RunLandingActions(request.at("actions"));
  return {{"ok", true}};
}

}  // namespace

int main(int argc, char** argv) {
  return sandboxd::ServeHelperRequest(argc, argv, {{sandboxd::HelperOp::kCompare, Compare},
                                                   {sandboxd::HelperOp::kRenames, Renames},
                                                   {sandboxd::HelperOp::kLanding, Landing},
                                                   {sandboxd::HelperOp::kSteps, Steps}});
}
