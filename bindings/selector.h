#pragma once
/// Selectors name a whole change (`PATH`), one hunk of it (`PATH:N`) or one part of a hunk
/// (`PATH:N.M`: the M-th run of changed lines of hunk N, as git add -p's `s` splits it). Parsing
/// is pure; which reading applies is decided against the change set, because a file may itself
/// be named "a:2".

#include <functional>
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sandboxd::api {

/// Hunk `hunk` of a change (from 1, as `diff` numbers them), or part `part` of it (from 1; 0
/// for the whole hunk).
struct HunkRef {
  int hunk = 0;
  int part = 0;
  auto operator<=>(const HunkRef&) const = default;
};

/// "2", or "2.1" for a part.
std::string ToString(const HunkRef& ref);

struct Selector {
  std::string path;          ///< as shown by `changes` (with the "N/" root prefix when needed)
  std::optional<int> hunk;   ///< 1-based hunk number, when the selector names one
  int part = 0;              ///< 1-based part of that hunk (PATH:N.M), 0 for the whole hunk
  HunkRef ref() const { return {hunk.value_or(0), part}; }
};

/// Whether the whole-change reading of `selector` names the change shown as `path`: the path
/// itself, or a directory above it ("." and trailing slashes allowed). The one rule that the
/// daemon and sandboxctl share.
bool SelectorNames(std::string_view selector, std::string_view path);

/// A selector as it came over the bus, with the name in it as bytes: a quoted wire name (utf8.h),
/// alone or before ":N", stands for the name it quotes; anything else stands for itself.
std::string SelectorFromWire(std::string_view wire);

/// The hunk reading of `text` ("a/b.c:2" → {"a/b.c", 2}, "a/b.c:2.1" → {"a/b.c", 2, part 1}),
/// if it has one; nullopt otherwise.
std::optional<Selector> ParseHunkSelector(std::string_view text);

/// Which of a list of selectors name a path, found in time that grows with the path's depth,
/// not with the number of selectors: a change set and the selectors naming it can each be a
/// million long, and testing every selector against every change was quadratic. Answers as
/// SelectorNames and ParseHunkSelector do, one selector at a time.
class SelectorIndex {
 public:
  explicit SelectorIndex(const std::vector<std::string>& selectors);

  /// Calls `hit(i)` for each selector i whose whole-change reading names `path` (the path
  /// itself, a directory above it, or "."), in no particular order (one may come twice).
  void ForEachNaming(std::string_view path, const std::function<void(size_t)>& hit) const;
  /// Whether any selector's whole-change reading names `path`.
  bool AnyNames(std::string_view path) const;
  /// The selectors whose hunk reading is of `path` exactly: {selector index, hunk or part}.
  const std::vector<std::pair<size_t, HunkRef>>& HunksOf(std::string_view path) const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  template <typename V>
  using Map = std::unordered_map<std::string, V, Hash, std::equal_to<>>;
  Map<std::vector<size_t>> exact_;   ///< a selector as typed: names the change at that path
  Map<std::vector<size_t>> above_;   ///< without trailing slashes: names the changes beneath
  std::vector<size_t> everything_;   ///< "." (and "./", ".//"): names every change
  Map<std::vector<std::pair<size_t, HunkRef>>> hunks_;
};

}  // namespace sandboxd::api
