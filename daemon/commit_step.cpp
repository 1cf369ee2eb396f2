#include "commit_step.h"

#include "errors.h"
#include "name_table.h"

namespace sandboxd {
namespace {

constexpr std::pair<StepAction, std::string_view> kActionNames[] = {
    {StepAction::kPlace, "place"},
    {StepAction::kMakeDirectory, "mkdir"},
    {StepAction::kRemove, "remove"},
    {StepAction::kChmod, "chmod"},
    {StepAction::kMove, "move"},
};

}  // namespace

std::string_view ToString(StepAction action) { return NameOf(kActionNames, action, "unknown"); }

std::optional<StepAction> StepActionFromString(std::string_view text) { return ValueOf<StepAction>(kActionNames, text); }

nlohmann::json StepToJson(const CommitStep& step) {
  return {step.seq, step.root, ToString(step.action), step.path, step.old_ino, step.new_ino, step.old_mode, step.new_mode, step.from};
}

InodesByRoot InodesNamedBy(const std::vector<CommitStep>& steps) {
  InodesByRoot inodes;
  for (const auto& step : steps)
    if (step.old_ino != 0) inodes[step.root].insert(step.old_ino);
  return inodes;
}

CommitStep StepFromJson(const nlohmann::json& json) {
  try {
    if (!json.is_array() || json.size() != 9) throw Error(Code::kInvalidArgument, "malformed commit step " + json.dump());
    CommitStep step;
    step.seq = json[0].get<size_t>();
    step.root = json[1].get<size_t>();
    auto action = StepActionFromString(json[2].get<std::string>());
    if (!action) throw Error(Code::kInvalidArgument, "unknown commit step action in " + json.dump());
    step.action = *action;
    step.path = json[3].get<std::string>();
    step.old_ino = json[4].get<ino_t>();
    step.new_ino = json[5].get<ino_t>();
    step.old_mode = json[6].get<mode_t>();
    step.new_mode = json[7].get<mode_t>();
    step.from = json[8].get<std::string>();
    if (step.action == StepAction::kMove && step.from.empty()) throw Error(Code::kInvalidArgument, "a move step without its source in " + json.dump());
    return step;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Code::kInvalidArgument, std::string("malformed commit step: ") + e.what());
  }
}

}  // namespace sandboxd
