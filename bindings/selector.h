#pragma once
/// Selectors name a whole change (`PATH`) or one hunk of it (`PATH:N`). Parsing is pure; which
/// reading applies is decided against the change set, because a file may itself be named "a:2".

#include <optional>
#include <string>
#include <string_view>

namespace sandboxd::api {

struct Selector {
  std::string path;          ///< as shown by `changes` (with the "N/" root prefix when needed)
  std::optional<int> hunk;   ///< 1-based hunk number, when the selector names one
};

/// Whether the whole-change reading of `selector` names the change shown as `path`: the path
/// itself, or a directory above it ("." and trailing slashes allowed). The one rule that the
/// daemon and sandboxctl share.
bool SelectorNames(std::string_view selector, std::string_view path);

/// A selector as it came over the bus, with the name in it as bytes: a quoted wire name (utf8.h),
/// alone or before ":N", stands for the name it quotes; anything else stands for itself.
std::string SelectorFromWire(std::string_view wire);

/// The hunk reading of `text` ("a/b.c:2" → {"a/b.c", 2}), if it has one; nullopt otherwise.
std::optional<Selector> ParseHunkSelector(std::string_view text);

}  // namespace sandboxd::api
