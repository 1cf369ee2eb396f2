// Hostile input: sandboxctl's --include / --exclude glob patterns and the change paths they are
// matched against (names a job chose). Input: newline-separated, the first line the pattern, the
// others paths. Beyond not crashing (or taking exponential time on "**"): a pattern that matches
// a path matches everything beneath it; a path with no glob characters, anchored with "/", matches
// itself; "**" matches every path; and PathPatterns passes a path exactly when an include (or
// none) and no exclude matches it.

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "check.h"
#include "input_lines.h"
#include "path_patterns.h"

namespace sandboxd::fuzz {
namespace {

/// Whether `path` has a component, i.e. something besides slashes.
bool HasComponent(std::string_view path) { return path.find_first_not_of('/') != std::string_view::npos; }

void CheckPath(const std::string& pattern, const std::string& path) {
  using sandboxctl::PatternMatches;
  bool matches = PatternMatches(pattern, path);
  if (matches) Require(PatternMatches(pattern, path + "/x"), "a pattern matching a path matches what is beneath it");
  Require(PatternMatches("**", path), "\"**\" matches every path");
  if (HasComponent(path) && path.find_first_of("*?[\\") == std::string::npos)
    Require(PatternMatches("/" + path, path), "a path without glob characters, anchored, matches itself");
  Require(sandboxctl::PathPatterns().Passes(path), "no patterns pass every path");
  Require(sandboxctl::PathPatterns({pattern}, {}).Passes(path) == matches, "an include passes what it matches");
  Require(sandboxctl::PathPatterns({}, {pattern}).Passes(path) == !matches, "an exclude stops what it matches");
  Require(!sandboxctl::PathPatterns({"**"}, {pattern}).Passes(path) == matches, "an exclude wins over an include");
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Neither a name nor a command-line argument can hold a NUL byte (fnmatch would stop there).
  if (std::memchr(data, '\0', size)) return 0;
  auto lines = sandboxd::fuzz::Lines(std::string_view(reinterpret_cast<const char*>(data), size));
  for (size_t i = 1; i < lines.size(); ++i) sandboxd::fuzz::CheckPath(lines.front(), lines[i]);
  return 0;
}
