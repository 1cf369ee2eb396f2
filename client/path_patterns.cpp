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

/// Whether `pattern` matches `path` or a directory above it: once the pattern is used up,
/// whatever is left of the path lies beneath what it matched. Worked out over every (pattern
/// position, path position) once, from the ends: backtracking on each "**" takes time
/// exponential in their number, and a job decides how deep its paths go (the fuzzer's
/// regression fuzz/regressions/path_patterns/ took over 10 s on one path).
bool Matches(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  const size_t parts = pattern.size(), names = path.size();
  // rest[p][s]: pattern[p..] matches path[s..] (or a directory above it).
  std::vector<std::vector<char>> rest(parts + 1, std::vector<char>(names + 1, 0));
  std::fill(rest[parts].begin(), rest[parts].end(), 1);
  for (size_t p = parts; p-- > 0;) {
    for (size_t s = names + 1; s-- > 0;) {
      if (pattern[p] == "**")
        rest[p][s] = rest[p + 1][s] || (s < names && rest[p][s + 1]);
      else
        rest[p][s] = s < names && rest[p + 1][s + 1] && fnmatch(pattern[p].c_str(), path[s].c_str(), FNM_PATHNAME) == 0;
    }
  }
  return rest[0][0];
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
  return Matches(parts, Components(path));
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
