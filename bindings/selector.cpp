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

namespace {

/// A whole positive number in `text`, no sign, nothing around it.
std::optional<int> Positive(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

}  // namespace

std::string ToString(const HunkRef& ref) {
  return std::to_string(ref.hunk) + (ref.part > 0 ? "." + std::to_string(ref.part) : "");
}

std::optional<Selector> ParseHunkSelector(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  std::string_view number = text.substr(colon + 1);
  std::string_view part_text;
  if (size_t dot = number.find('.'); dot != std::string_view::npos) {
    part_text = number.substr(dot + 1);
    number = number.substr(0, dot);
    if (part_text.empty()) return std::nullopt;
  }
  auto hunk = Positive(number);
  if (!hunk) return std::nullopt;
  Selector selector{std::string(text.substr(0, colon)), *hunk, 0};
  if (!part_text.empty()) {
    auto part = Positive(part_text);
    if (!part) return std::nullopt;
    selector.part = *part;
  }
  return selector;
}

SelectorIndex::SelectorIndex(const std::vector<std::string>& selectors) {
  for (size_t i = 0; i < selectors.size(); ++i) {
    std::string_view selector = selectors[i];
    exact_[std::string(selector)].push_back(i);
    while (selector.size() > 1 && selector.back() == '/') selector.remove_suffix(1);
    if (selector == ".") everything_.push_back(i);
    else above_[std::string(selector)].push_back(i);
    if (auto hunk = ParseHunkSelector(selectors[i])) hunks_[hunk->path].emplace_back(i, hunk->ref());
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

const std::vector<std::pair<size_t, HunkRef>>& SelectorIndex::HunksOf(std::string_view path) const {
  static const std::vector<std::pair<size_t, HunkRef>> kNone;
  auto it = hunks_.find(path);
  return it == hunks_.end() ? kNone : it->second;
}

std::string SelectorFromWire(std::string_view wire) {
  if (wire.empty() || wire.front() != '"') return std::string(wire);
  if (auto name = NameFromWire(wire)) return *name;
  if (auto hunk = ParseHunkSelector(wire))
    if (auto name = NameFromWire(hunk->path)) return *name + ":" + ToString(hunk->ref());
  return std::string(wire);
}

}  // namespace sandboxd::api
