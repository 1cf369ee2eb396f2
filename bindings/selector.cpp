#include "selector.h"

#include "utf8.h"

#include <charconv>

namespace sandboxd::api {

bool SelectorNames(std::string_view selector, std::string_view path) {
  if (selector == path) return true;
  while (selector.size() > 1 && selector.back() == '/') selector.remove_suffix(1);
  if (selector == ".") return true;
  return path.size() > selector.size() && path.starts_with(selector) && path[selector.size()] == '/';
}

std::optional<Selector> ParseHunkSelector(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  std::string_view number = text.substr(colon + 1);
  int hunk = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), hunk);
  if (ec != std::errc() || end != number.data() + number.size() || hunk < 1) return std::nullopt;
  return Selector{std::string(text.substr(0, colon)), hunk};
}

std::string SelectorFromWire(std::string_view wire) {
  if (wire.empty() || wire.front() != '"') return std::string(wire);
  if (auto name = NameFromWire(wire)) return *name;
  if (auto hunk = ParseHunkSelector(wire))
    if (auto name = NameFromWire(hunk->path)) return *name + ":" + std::to_string(*hunk->hunk);
  return std::string(wire);
}

}  // namespace sandboxd::api
