#pragma once
/// The --include / --exclude patterns of sandboxctl: which change paths (as `changes` shows
/// them) a user means. A path passes when it matches at least one include (or there is none)
/// and no exclude. Pure: no D-Bus, no file system.
///
/// A pattern without '/' matches the last component at any depth ("*.log"); one with '/'
/// matches from the start of the path ("build/*.o"; a leading '/' only anchors, a trailing one
/// is ignored). "**" as a whole component matches any number of components, none included
/// ("node_modules/**", "**/test/*.c"); "*", "?" and "[...]" match within one component as
/// fnmatch(3) with FNM_PATHNAME does. A pattern that matches a directory matches everything
/// beneath it too.

#include <string>
#include <string_view>
#include <vector>

namespace sandboxctl {

/// True when `pattern` matches `path` or one of the directories above it.
bool PatternMatches(std::string_view pattern, std::string_view path);

class PathPatterns {
 public:
  PathPatterns() = default;
  PathPatterns(std::vector<std::string> includes, std::vector<std::string> excludes)
      : includes_(std::move(includes)), excludes_(std::move(excludes)) {}

  /// No pattern at all: every path passes, and verbs behave as without the options.
  bool empty() const { return includes_.empty() && excludes_.empty(); }
  bool Passes(std::string_view path) const;
  /// The patterns as they were typed, for messages: "--include '*.c' --exclude 'x/**'".
  std::string Describe() const;

 private:
  std::vector<std::string> includes_;
  std::vector<std::string> excludes_;
};

}  // namespace sandboxctl
