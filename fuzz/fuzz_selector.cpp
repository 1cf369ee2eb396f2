// Hostile input: selectors as users type them (PATH, a directory above changes, PATH:N) and the
// change paths they are matched against, which are names a job chose; both cross the bus as wire
// names (utf8.h). Input: newline-separated, the first line the selector, the others change paths
// of one root. Beyond not crashing: a name survives its wire form and its quoting, alone and as
// PATH:N; a hunk reading formats back to itself; a selector that names a path names everything
// beneath it; and SelectChanges keeps exactly the changes the selector names, in order, or
// refuses (NotFound, naming it) a selector that names none.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"
#include "changes/change_selection.h"
#include "check.h"
#include "input_lines.h"
#include "quote_path.h"
#include "selector.h"
#include "utf8.h"

namespace sandboxd::fuzz {
namespace {

void CheckName(const std::string& name) {
  std::string wire = api::WireName(name);
  Require(api::IsValidUtf8(wire), "a wire name is valid UTF-8");
  Require(api::NameFromWire(wire) == name, "a wire name stands for its name");
  Require(api::UnquotePath(api::QuotePath(name)) == name, "a quoted name unquotes to itself");
  // Typed in git's quotes, a name is that file, and "NAME":7 hunk 7 of it, whatever the name holds.
  std::string quoted = api::QuotePath(name);
  if (!quoted.starts_with('"')) quoted = "\"" + quoted + "\"";
  auto file = api::ParseTypedSelector(quoted);
  Require(file && file->whole && file->whole->path == name && !file->hunk, "a quoted name names that file alone");
  auto hunk7 = api::ParseTypedSelector(quoted + ":7");
  Require(hunk7 && !hunk7->whole && hunk7->hunk && hunk7->hunk->path == name && hunk7->hunk->hunk == 7,
          "a quoted name and :7 names hunk 7 of it alone");
  if (name.empty()) return;
  auto dotted = api::ParseTypedSelector("./" + name);
  Require(dotted && dotted->whole && dotted->whole->path == name && !dotted->hunk, "./NAME names that file alone");
  auto hunk = api::ParseHunkSelector(name + ":7");
  Require(hunk && hunk->path == name && hunk->hunk == 7, "PATH:N reads as hunk N of PATH");
}

void CheckSelector(const std::string& selector, const std::vector<std::string>& paths) {
  if (auto hunk = api::ParseHunkSelector(selector)) {
    Require(!hunk->path.empty() && hunk->hunk && *hunk->hunk >= 1, "a hunk reading has a path and a number from 1");
    Require(hunk->part >= 0, "a part is from 1, or 0 for the whole hunk");
    auto again = api::ParseHunkSelector(hunk->path + ":" + api::ToString(hunk->ref()));
    Require(again && again->path == hunk->path && again->ref() == hunk->ref(), "a hunk reading formats back to itself");
  }
  for (const auto& path : paths) {
    Require(api::SelectorNames(path, path) && api::SelectorNames(".", path), "a path and \".\" name the path");
    if (!path.empty() && api::SelectorNames(selector, path))
      Require(api::SelectorNames(selector, path + "/x"), "a selector naming a path names what is beneath it");
  }
}

/// A selector as the tests write it: PATH:N a hunk, anything else a change or directory.
api::Selector AsSelector(const std::string& text) {
  auto hunk = api::ParseHunkSelector(text);
  return hunk ? *hunk : api::Selector{text};
}

/// Whether `selector` names the change at `path` (a hunk or part of it, or it whole).
bool Names(const api::Selector& selector, const std::string& path) {
  return selector.hunk ? selector.path == path : api::SelectorNames(selector.path, path);
}

void CheckSelectChanges(const std::string& text, const std::vector<std::string>& paths) {
  const api::Selector selector = AsSelector(text);
  RootChanges root{0, {}};
  for (const auto& path : paths) root.changes.push_back(Change{.path = path});
  std::vector<RootChanges> all{root};
  std::vector<std::string> shown;
  for (const auto& change : root.changes) shown.push_back(DisplayPath(change, ""));
  auto everything = SelectChanges(all, api::WholeSelectors(shown), {""}, "fuzz");
  Require(everything.size() == 1 && everything[0].changes == root.changes, "selecting every shown path selects all");

  std::vector<RootChanges> selected;
  try {
    selected = SelectChanges(all, {selector}, {""}, "fuzz");
  } catch (const Error& e) {
    // what() ends at a NUL byte, which a quoted wire name can stand for.
    // Named as the selector reads ("a:02" is hunk 2 of a: "a:2").
    const std::string named = api::ToString(selector);
    Require(e.code() == Code::kNotFound && std::string(e.what()).find(named.substr(0, named.find('\0'))) != std::string::npos,
            "a selector naming nothing is refused by name");
    for (const auto& path : shown) Require(!Names(selector, path), "a selector naming a change is not refused");
    return;
  }
  Require(selected.size() == 1, "the selection keeps the roots");
  size_t next = 0;  // kept changes form a subsequence of the root's, each one named
  for (const auto& change : selected[0].changes) {
    while (next < root.changes.size() && !(root.changes[next] == change)) ++next;
    Require(next < root.changes.size(), "selected changes keep their order");
    Require(Names(selector, DisplayPath(change, "")), "every selected change is named");
    ++next;
  }
  for (const auto& path : shown)
    if (Names(selector, path))
      Require(std::any_of(selected[0].changes.begin(), selected[0].changes.end(),
                          [&](const Change& c) { return DisplayPath(c, "") == path; }),
              "every named change is selected");
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  auto lines = fuzz::Lines(std::string_view(reinterpret_cast<const char*>(data), size));
  std::string selector = lines.front();
  std::vector<std::string> paths(lines.begin() + 1, lines.end());
  for (const auto& line : lines) fuzz::CheckName(line);
  fuzz::CheckSelector(selector, paths);
  fuzz::CheckSelectChanges(selector, paths);
  return 0;
}
