#include "object_paths.h"

#include "api.h"

namespace sandboxd::api {

std::string SandboxPath(std::string_view id) { return std::string(kSandboxPathPrefix) + std::string(id); }

std::string JobPath(std::string_view id) { return std::string(kJobPathPrefix) + std::string(id); }

bool IsValidId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<std::string> IdFromPath(std::string_view path, std::string_view prefix) {
  if (path.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view id = path.substr(prefix.size());
  if (!IsValidId(id)) return std::nullopt;
  return std::string(id);
}

}  // namespace sandboxd::api
