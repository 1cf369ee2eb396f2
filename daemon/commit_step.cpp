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
  return {{"seq", step.seq},         {"root", step.root},         {"path", step.path},
          {"action", ToString(step.action)}, {"old_ino", step.old_ino}, {"new_ino", step.new_ino},
          {"old_mode", step.old_mode}, {"new_mode", step.new_mode}, {"from", step.from}};
}

CommitStep StepFromJson(const nlohmann::json& json) {
  try {
    CommitStep step;
    step.seq = json.at("seq").get<size_t>();
    step.root = json.at("root").get<size_t>();
    step.path = json.at("path").get<std::string>();
    auto action = StepActionFromString(json.at("action").get<std::string>());
    if (!action) throw Error(Code::kInvalidArgument, "unknown commit step action in " + json.dump());
    step.action = *action;
    step.old_ino = json.at("old_ino").get<ino_t>();
    step.new_ino = json.at("new_ino").get<ino_t>();
    step.old_mode = json.at("old_mode").get<mode_t>();
    step.new_mode = json.at("new_mode").get<mode_t>();
    step.from = json.value("from", std::string());
    if (step.action == StepAction::kMove && step.from.empty()) throw Error(Code::kInvalidArgument, "a move step without its source in " + json.dump());
    return step;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Code::kInvalidArgument, std::string("malformed commit step: ") + e.what());
  }
}

}  // namespace sandboxd
