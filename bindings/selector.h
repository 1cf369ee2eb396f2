#pragma once
/// Selectors name a whole change (`PATH`), one hunk of it (`PATH:N`) or one part of a hunk
/// (`PATH:N.M`: the M-th run of changed lines of hunk N, as git add -p's `s` splits it). On the
/// bus a selector is structured, (path, hunk, part), and never parsed out of a name: a job may
/// name a file "run.sh:1" (DESIGN, "Data safety"). Only what people type is parsed
/// (ParseTypedSelector), and a text that could name a file and a hunk is theirs to settle.

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

/// "PATH", "PATH:N" or "PATH:N.M": how a message names what a selector names.
std::string ToString(const Selector& selector);

/// What a selector typed on the command line can mean: the change (or directory) at a path, a
/// hunk or part of a change, or either.
struct TypedSelector {
  std::optional<Selector> whole;  ///< the reading as a change or directory
  std::optional<Selector> hunk;   ///< the reading as a hunk or part
};

/// The readings of `typed`, with paths as typed (bytes): "a:2" is both the change "a:2" and hunk
/// 2 of "a"; git's quoting names exactly what it quotes ("\"a:2\"" the change a:2, "\"a\":2"
/// hunk 2 of a), and "./a:2" the change a:2 ("./" alone: "."). nullopt for quoting that does
/// not parse, or anything but ":N" or ":N.M" after a closing quote.
std::optional<TypedSelector> ParseTypedSelector(std::string_view typed);

/// Whether the whole-change reading of `selector` names the change shown as `path`: the path
/// itself, or a directory above it ("." and trailing slashes allowed). The one rule that the
/// daemon and sandboxctl share.
bool SelectorNames(std::string_view selector, std::string_view path);

/// The hunk reading of `text` ("a/b.c:2" → {"a/b.c", 2}, "a/b.c:2.1" → {"a/b.c", 2, part 1}),
/// if it has one; nullopt otherwise. Only for text a person typed (ParseTypedSelector) and the
/// helpers' own messages, never for a name.
std::optional<Selector> ParseHunkSelector(std::string_view text);

/// Whole-change selectors of `paths` (Commit's: paths only).
std::vector<Selector> WholeSelectors(const std::vector<std::string>& paths);

/// Which of a list of selectors name a path, found in time that grows with the path's depth,
/// not with the number of selectors: a change set and the selectors naming it can each be a
/// million long, and testing every selector against every change was quadratic. A selector
/// without a hunk names as SelectorNames does; one with a hunk names a hunk or part of its
/// path exactly.
class SelectorIndex {
 public:
  explicit SelectorIndex(const std::vector<Selector>& selectors);

  /// Calls `hit(i)` for each whole-change selector i that names `path` (the path
  /// itself, a directory above it, or "."), in no particular order (one may come twice).
  void ForEachNaming(std::string_view path, const std::function<void(size_t)>& hit) const;
  /// Whether any whole-change selector names `path`.
  bool AnyNames(std::string_view path) const;
  /// Whether a whole-change selector names `path` itself (not a directory above it, nor ".").
  bool NamesExactly(std::string_view path) const { return exact_.find(path) != exact_.end(); }
  /// The selectors of a hunk or part of `path` exactly: {selector index, hunk or part}.
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
