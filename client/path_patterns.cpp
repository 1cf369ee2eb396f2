#include "path_patterns.h"

#include <fnmatch.h>

#include <algorithm>

namespace sandboxctl {
namespace {

/// The non-empty components of `text` split at '/'.
std::vector<std::string> Components(std::string_view text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t slash = std::min(text.find('/', start), text.size());
    if (slash > start) parts.emplace_back(text.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

/// Whether `pattern[p..]` matches `path[s..]` or a directory above it: once the pattern is used
/// up, whatever is left of the path lies beneath what it matched.
bool MatchFrom(const std::vector<std::string>& pattern, size_t p, const std::vector<std::string>& path, size_t s) {
  if (p == pattern.size()) return true;
  if (pattern[p] == "**") return MatchFrom(pattern, p + 1, path, s) || (s < path.size() && MatchFrom(pattern, p, path, s + 1));
  if (s == path.size()) return false;
  return fnmatch(pattern[p].c_str(), path[s].c_str(), FNM_PATHNAME) == 0 && MatchFrom(pattern, p + 1, path, s + 1);
}

bool AnyMatches(const std::vector<std::string>& patterns, std::string_view path) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) { return PatternMatches(pattern, path); });
}

}  // namespace

bool PatternMatches(std::string_view pattern, std::string_view path) {
  while (pattern.size() > 1 && pattern.back() == '/') pattern.remove_suffix(1);
  // Without a '/' (a trailing one aside) a pattern names an entry at any depth: "*.log"
  // reads as "**/*.log".
  bool anchored = pattern.find('/') != std::string_view::npos;
  std::vector<std::string> parts = Components(pattern);
  if (parts.empty()) return false;  // "" or "/" names no path
  if (!anchored) parts.insert(parts.begin(), "**");
  return MatchFrom(parts, 0, Components(path), 0);
}

bool PathPatterns::Passes(std::string_view path) const {
  return (includes_.empty() || AnyMatches(includes_, path)) && !AnyMatches(excludes_, path);
}

std::string PathPatterns::Describe() const {
  std::string text;
  for (const auto& pattern : includes_) text += (text.empty() ? "" : " ") + std::string("--include '") + pattern + "'";
  for (const auto& pattern : excludes_) text += (text.empty() ? "" : " ") + std::string("--exclude '") + pattern + "'";
  return text;
}

}  // namespace sandboxctl
