#pragma once
/// The JSON form of a change, as sandboxd hands change lists to sandboxd-helper.

#include <nlohmann/json.hpp>

#include "model/change.h"

namespace sandboxd {

nlohmann::json ChangeToJson(const Change& change);
/// Throws Error(kInvalidArgument) on a malformed object.
Change ChangeFromJson(const nlohmann::json& json);

}  // namespace sandboxd
