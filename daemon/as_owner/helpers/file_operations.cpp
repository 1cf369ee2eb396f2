// What sandboxd-helper does (helper_main.cpp), as the sandbox's owner: compare, renames, steps
// and landing.

#include "helpers/helper_operations.h"

#include <nlohmann/json.hpp>
#include <string>

#include "base/errors.h"
#include "helpers/content_digest.h"
#include "helpers/landing_actions.h"
#include "helpers/commit_steps_apply.h"
#include "model/helper_request.h"
#include "model/renames.h"
#include "model/same_content.h"

namespace sandboxd {
namespace {

/// {"same": [PATH, ...]}: the paths whose live and sandbox entries have the same content.
nlohmann::json Compare(const nlohmann::json& request) {
  int live_fd = request.at("live_fd").get<int>();
  int upper_fd = request.at("upper_fd").get<int>();
  nlohmann::json same = nlohmann::json::array();
  for (const auto& path : request.at("paths"))
    if (SameContent(live_fd, upper_fd, path.get<std::string>())) same.push_back(path);
  return {{"same", same}};
}

/// {"roots": [{"renames": [[FROM, TO], ...]}, ...]}: of each root's candidates, the renames whose
/// contents are identical.
nlohmann::json Renames(const nlohmann::json& request) {
  nlohmann::json answer_roots = nlohmann::json::array();
  for (const auto& root : request.at("roots")) {
    auto candidates = root.at("candidates").get<RenameCandidates>();
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& rename : ConfirmRenames(root.at("live_fd").get<int>(), root.at("upper_fd").get<int>(), candidates))
      pairs.push_back({rename.from, rename.to});
    answer_roots.push_back({{"renames", pairs}});
  }
  return {{"roots", answer_roots}};
}

nlohmann::json Steps(const nlohmann::json& request) {
  std::vector<StepRoot> roots;
  for (const auto& root : request.at("roots"))
    roots.push_back({root.at("live_fd").get<int>(), root.at("upper_fd").get<int>(), root.at("removed_fd").get<int>()});
  const auto& packed = request.at("steps").get_binary();
  std::vector<CommitStep> steps =
      UnpackSteps(std::string_view(reinterpret_cast<const char*>(packed.data()), packed.size()));
  std::string name = request.at("direction").get<std::string>();
  bool sync = request.at("sync").get<bool>();
  auto direction = StepDirectionFromString(name);
  if (!direction) throw Error(Code::kInvalidArgument, "unknown direction '" + name + "'");
  switch (*direction) {
    case StepDirection::kForward:
      RollForward(steps, roots, sync);
      break;
    case StepDirection::kBack:
      RollBack(steps, roots, sync);
      break;
  }
  return {{"ok", true}};
}

/// {"digests": [DIGEST, ...]}: of each path beneath the upper, what a decision is bound to
/// (content_digest.h), in the order asked.
nlohmann::json Digest(const nlohmann::json& request) {
  int upper_fd = request.at("upper_fd").get<int>();
  nlohmann::json digests = nlohmann::json::array();
  for (const auto& path : request.at("paths")) digests.push_back(ContentDigest(upper_fd, path.get<std::string>()));
  return {{"digests", digests}};
}

/// Makes, fills and removes a landing area (landing_area.h) in a live root, as the owner.
nlohmann::json Landing(const nlohmann::json& request) {
  RunLandingActions(request.at("actions"));
  return {{"ok", true}};
}

}  // namespace

const std::map<HelperOp, HelperOperation>& FileHelperOperations() {
  static const std::map<HelperOp, HelperOperation> operations = {
      {HelperOp::kCompare, Compare}, {HelperOp::kRenames, Renames}, {HelperOp::kLanding, Landing}, {HelperOp::kSteps, Steps},
      {HelperOp::kDigest, Digest}};
  return operations;
}

}  // namespace sandboxd
