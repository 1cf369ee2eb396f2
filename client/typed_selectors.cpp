#include "typed_selectors.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "context.h"
#include "quote_path.h"
#include "utf8.h"

namespace sandboxctl {
namespace {

using sandboxd::api::Selector;

sandboxd::api::TypedSelector Parse(const std::string& typed) {
  auto parsed = sandboxd::api::ParseTypedSelector(typed);
  if (!parsed)
    throw UsageError{"cannot read selector " + sandboxd::api::QuotePath(typed) +
                     ": a quoted name is closed and may be followed only by :N or :N.M"};
  // Paths travel as wire names, as the change set names them.
  if (parsed->whole) parsed->whole->path = sandboxd::api::WireName(parsed->whole->path);
  if (parsed->hunk) parsed->hunk->path = sandboxd::api::WireName(parsed->hunk->path);
  return *parsed;
}

/// Whether a whole-change selector of `path` names any of `paths` (it or a change beneath it).
bool NamesAny(const std::string& path, const std::vector<std::string>& paths) {
  for (const auto& each : paths)
    if (sandboxd::api::SelectorNames(path, each)) return true;
  return false;
}

/// A name in git's quotes, as a selector names exactly that name.
std::string InQuotes(const std::string& wire) {
  std::string shown = sandboxd::api::ShowWireName(wire);
  return shown.starts_with('"') ? shown : "\"" + shown + "\"";
}

}  // namespace

std::string DescribeSelector(const Selector& selector) {
  std::string path = sandboxd::api::ShowWireName(selector.path);
  if (!selector.hunk) return "the file " + path;
  std::string hunk = "hunk " + std::to_string(*selector.hunk) + " of " + path;
  return selector.part > 0 ? "part " + std::to_string(selector.part) + " of " + hunk : hunk;
}

std::vector<Selector> ResolveTypedSelectors(const std::vector<std::string>& typed, const ChangePaths& list, const std::string& sandbox) {
  std::vector<Selector> resolved;
  std::optional<std::vector<std::string>> paths;  // listed once, and only when a selector needs it
  for (const auto& text : typed) {
    auto parsed = Parse(text);
    if (!parsed.whole || !parsed.hunk) {
      resolved.push_back(parsed.whole ? *parsed.whole : *parsed.hunk);
      continue;
    }
    if (!paths) paths = list();
    bool file = NamesAny(parsed.whole->path, *paths);
    bool hunk = std::find(paths->begin(), paths->end(), parsed.hunk->path) != paths->end();
    if (file && hunk) {
      // A job chose the name: which one the person meant is theirs to say, never a guess.
      const Selector& whole = *parsed.whole;
      throw std::runtime_error("'" + text + "' could name " + DescribeSelector(whole) + " or " + DescribeSelector(*parsed.hunk) +
                               " in sandbox " + sandbox + "; write " + InQuotes(whole.path) + " or ./" +
                               sandboxd::api::ShowWireName(whole.path) + " for the file, " + InQuotes(parsed.hunk->path) + ":" +
                               sandboxd::api::ToString(parsed.hunk->ref()) + " for the " + (parsed.hunk->part > 0 ? "part" : "hunk"));
    }
    // Only a change of that name: the file; only the change the hunk is of: the hunk; neither:
    // the file, for the daemon to refuse by name.
    resolved.push_back(hunk && !file ? *parsed.hunk : *parsed.whole);
  }
  return resolved;
}

std::vector<Selector> TypedPaths(const std::vector<std::string>& typed) {
  std::vector<Selector> paths;
  for (const auto& text : typed) {
    auto parsed = Parse(text);
    if (!parsed.whole)
      throw UsageError{"commit takes whole changes: " + sandboxd::api::QuotePath(text) + " names a hunk (approve it, then commit)"};
    paths.push_back(*parsed.whole);
  }
  return paths;
}

}  // namespace sandboxctl
