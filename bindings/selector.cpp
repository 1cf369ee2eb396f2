#include "selector.h"

#include "quote_path.h"
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

std::string ToString(const Selector& selector) {
  return selector.hunk ? selector.path + ":" + ToString(selector.ref()) : selector.path;
}

std::optional<TypedSelector> ParseTypedSelector(std::string_view typed) {
  if (typed.starts_with('"')) {
    // The quoted token is the name, exactly; after it only a hunk or part number may follow.
    size_t end = 1;
    for (; end < typed.size() && typed[end] != '"'; ++end)
      if (typed[end] == '\\') ++end;
    if (end >= typed.size()) return std::nullopt;
    auto name = UnquotePath(typed.substr(0, end + 1));
    if (!name) return std::nullopt;
    std::string_view rest = typed.substr(end + 1);
    if (rest.empty()) return TypedSelector{Selector{*name}, std::nullopt};
    auto hunk = ParseHunkSelector("-" + std::string(rest));
    if (!rest.starts_with(':') || !hunk) return std::nullopt;
    hunk->path = *name;
    return TypedSelector{std::nullopt, std::move(hunk)};
  }
  if (typed.starts_with("./")) {
    // "./" says "this is a path" as it does to a shell: never a hunk.
    std::string_view path = typed.substr(2);
    return TypedSelector{Selector{path.empty() ? std::string(".") : std::string(path)}, std::nullopt};
  }
  return TypedSelector{Selector{std::string(typed)}, ParseHunkSelector(typed)};
}

std::vector<Selector> WholeSelectors(const std::vector<std::string>& paths) {
  std::vector<Selector> selectors;
  selectors.reserve(paths.size());
  for (const auto& path : paths) selectors.push_back(Selector{path});
  return selectors;
}

SelectorIndex::SelectorIndex(const std::vector<Selector>& selectors) {
  for (size_t i = 0; i < selectors.size(); ++i) {
    if (selectors[i].hunk) {
      hunks_[selectors[i].path].emplace_back(i, selectors[i].ref());
      continue;
    }
    std::string_view selector = selectors[i].path;
    exact_[std::string(selector)].push_back(i);
    while (selector.size() > 1 && selector.back() == '/') selector.remove_suffix(1);
    if (selector == ".") everything_.push_back(i);
    else above_[std::string(selector)].push_back(i);
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

}  // namespace sandboxd::api
