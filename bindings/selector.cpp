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

SelectorIndex::SelectorIndex(const std::vector<std::string>& selectors) {
  for (size_t i = 0; i < selectors.size(); ++i) {
    std::string_view selector = selectors[i];
    exact_[std::string(selector)].push_back(i);
    while (selector.size() > 1 && selector.back() == '/') selector.remove_suffix(1);
    if (selector == ".") everything_.push_back(i);
    else above_[std::string(selector)].push_back(i);
    if (auto hunk = ParseHunkSelector(selectors[i])) hunks_[hunk->path].emplace_back(i, *hunk->hunk);
  }
}

void SelectorIndex::ForEachNaming(std::string_view path, const std::function<void(size_t)>& hit) const {
  if (auto it = exact_.find(path); it != exact_.end())
    for (size_t i : it->second) hit(i);
  for (size_t i : everything_) hit(i);
  // Each directory above: the path up to each '/' (SelectorNames' "starts with it and a '/'").
  for (size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
    if (auto it = above_.find(path.substr(0, slash)); it != above_.end())
      for (size_t i : it->second) hit(i);
}

bool SelectorIndex::AnyNames(std::string_view path) const {
  bool any = false;
  ForEachNaming(path, [&](size_t) { any = true; });
  return any;
}

const std::vector<std::pair<size_t, int>>& SelectorIndex::HunksOf(std::string_view path) const {
  static const std::vector<std::pair<size_t, int>> kNone;
  auto it = hunks_.find(path);
  return it == hunks_.end() ? kNone : it->second;
}

std::string SelectorFromWire(std::string_view wire) {
  if (wire.empty() || wire.front() != '"') return std::string(wire);
  if (auto name = NameFromWire(wire)) return *name;
  if (auto hunk = ParseHunkSelector(wire))
    if (auto name = NameFromWire(hunk->path)) return *name + ":" + std::to_string(*hunk->hunk);
  return std::string(wire);
}

}  // namespace sandboxd::api
