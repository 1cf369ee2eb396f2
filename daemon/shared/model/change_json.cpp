#include "model/change_json.h"

#include "base/errors.h"

namespace sandboxd {

nlohmann::json ChangeToJson(const Change& change) {
  return {
      {"path", change.path},
      {"kind", ToString(change.kind)},
      {"old_type", ToString(change.old_type)},
      {"new_type", ToString(change.new_type)},
      {"old_mode", change.old_mode},
      {"new_mode", change.new_mode},
  };
}

Change ChangeFromJson(const nlohmann::json& json) {
  try {
    Change change;
    change.path = json.at("path").get<std::string>();
    auto kind = ChangeKindFromString(json.at("kind").get<std::string>());
    auto old_type = EntryTypeFromString(json.at("old_type").get<std::string>());
    auto new_type = EntryTypeFromString(json.at("new_type").get<std::string>());
    if (!kind || !old_type || !new_type) throw Error(Code::kInvalidArgument, "unknown change kind or type for " + change.path);
    change.kind = *kind;
    change.old_type = *old_type;
    change.new_type = *new_type;
    change.old_mode = json.at("old_mode").get<mode_t>();
    change.new_mode = json.at("new_mode").get<mode_t>();
    return change;
  } catch (const nlohmann::json::exception& e) {
    throw Error(Code::kInvalidArgument, std::string("malformed change: ") + e.what());
  }
}

}  // namespace sandboxd
