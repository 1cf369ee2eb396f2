#pragma once
/// Object paths of sandboxes and jobs. Ids are lowercase hex, so they are valid path elements
/// as they are; a user-chosen name never appears in a path.

#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::api {

std::string SandboxPath(std::string_view id);
std::string JobPath(std::string_view id);
/// The id at the end of `path` if it starts with `prefix` and the id is well formed.
std::optional<std::string> IdFromPath(std::string_view path, std::string_view prefix);
/// True for 1..64 lowercase hex digits.
bool IsValidId(std::string_view id);

}  // namespace sandboxd::api
