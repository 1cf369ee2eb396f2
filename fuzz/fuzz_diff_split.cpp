// Hostile input: the git-style diff sandboxctl reads from the daemon before `review` asks about
// it. Its file names, and every line of content, are bytes a job chose. Beyond not crashing:
// splitting loses and adds nothing (the sections' headers and hunks, joined, are the diff from
// its first "diff --git" line on), every section starts at a "diff --git" line and every hunk
// at an "@@" one; a header written as the daemon writes it (quoted names) reads back to its
// path; SectionsOfChange gives each section with a readable path to exactly one change; and
// review's split of a hunk into parts keeps every changed line once.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "check.h"
#include "diff_split.h"
#include "hunk_split.h"
#include "quote_path.h"
#include "utf8.h"

namespace sandboxd::fuzz {
namespace {

/// The part of `diff` from its first line that starts a file section.
std::string_view FromFirstSection(std::string_view diff) {
  for (size_t start = 0; start < diff.size();) {
    if (diff.substr(start).starts_with("diff --git ")) return diff.substr(start);
    size_t newline = diff.find('\n', start);
    if (newline == std::string_view::npos) break;
    start = newline + 1;
  }
  return {};
}

/// review's `s` (hunk_split.h): a hunk is one part or several, each a hunk of its own, and
/// every changed line of the hunk is in exactly one part.
void CheckParts(const std::string& hunk) {
  auto parts = api::SplitHunk(hunk);
  Require(!parts.empty(), "a hunk has a part");
  if (parts.size() == 1) return;
  auto changed_lines = [](const std::string& text) {
    std::string changed;
    for (size_t at = text.find('\n'); at != std::string::npos && at + 1 < text.size(); at = text.find('\n', at + 1))
      if (text[at + 1] == '-' || text[at + 1] == '+') changed += text.substr(at + 1, text.find('\n', at + 1) - at);
    return changed;
  };
  std::string all;
  for (const auto& part : parts) {
    Require(part.starts_with("@@ -"), "a part starts at an @@ line of its own");
    all += changed_lines(part);
  }
  Require(all == changed_lines(hunk), "the parts hold every changed line of the hunk once, in order");
}

void CheckSplit(std::string_view diff) {
  auto sections = sandboxctl::SplitDiff(diff);
  std::string joined;
  std::set<std::string> paths;
  size_t readable = 0;
  for (const auto& section : sections) {
    Require(section.header.starts_with("diff --git "), "a section starts at its diff --git line");
    joined += section.header;
    for (const auto& hunk : section.hunks) {
      Require(hunk.starts_with("@@"), "a hunk starts at its @@ line");
      joined += hunk;
      CheckParts(hunk);
    }
    if (!section.path.empty()) {
      paths.insert(section.path);
      ++readable;
    }
  }
  Require(joined == FromFirstSection(diff), "the sections joined are the diff from its first section on");

  // Every readable path is a change of its own, so it belongs to that change alone; a section
  // whose path cannot be read belongs to every change.
  std::vector<std::string> changes(paths.begin(), paths.end());
  size_t shown = 0;
  for (const auto& change : changes) shown += sandboxctl::SectionsOfChange(sections, change, changes).size();
  Require(shown == readable + (sections.size() - readable) * changes.size(),
          "each section with a path belongs to exactly one change");
}

/// A diff header as diff_writer writes it, for a name taken from the input.
void CheckHeader(std::string_view name) {
  if (name.empty() || name.find('\0') != std::string_view::npos) return;  // no file is named so
  std::string path(name);
  std::string line = "diff --git " + api::QuotePath("a/" + path) + " " + api::QuotePath("b/" + path);
  Require(sandboxctl::DiffGitPath(line) == path, "a header names its path");
  auto sections = sandboxctl::SplitDiff(line + "\n@@ -1 +1 @@\n-a\n+b\n");
  Require(sections.size() == 1 && sections[0].path == api::WireName(path) && sections[0].hunks.size() == 1,
          "a section carries its path's wire name");
}

}  // namespace
}  // namespace sandboxd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sandboxd::fuzz::CheckSplit(text);
  sandboxd::fuzz::CheckHeader(text.substr(0, text.find('\n')));
  return 0;
}
