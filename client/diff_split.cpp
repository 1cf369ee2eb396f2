#include "diff_split.h"

#include <set>

#include "quote_path.h"
#include "utf8.h"

namespace sandboxctl {
namespace {

constexpr std::string_view kFileStart = "diff --git ";

/// The directory above `path`: "a/b" → "a", "a" → ".".
std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// The deepest of `changes` at or above `path`, if any.
std::optional<std::string> OwnerOf(const std::string& path, const std::set<std::string>& changes) {
  for (std::string at = path;; at = Parent(at)) {
    if (changes.count(at)) return at;
    if (at == "." || at.empty()) return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> DiffGitPath(std::string_view line) {
  // A quoted pair first (quote_path.h): "a/P" "b/P", with P's quotes and escapes.
  if (line.starts_with("diff --git \"")) {
    std::string_view rest = line.substr(kFileStart.size());
    size_t end = 1;
    while (end < rest.size() && rest[end] != '"') end += rest[end] == '\\' ? 2 : 1;
    if (end >= rest.size() || rest.substr(end + 1, 1) != " ") return std::nullopt;
    auto old_path = sandboxd::api::UnquotePath(rest.substr(0, end + 1));
    auto new_path = sandboxd::api::UnquotePath(rest.substr(end + 2));
    if (!old_path || !new_path || !old_path->starts_with("a/") || !new_path->starts_with("b/") ||
        old_path->substr(2) != new_path->substr(2) || old_path->size() == 2)
      return std::nullopt;
    return old_path->substr(2);
  }
  constexpr std::string_view kOld = "diff --git a/", kNew = " b/";
  if (!line.starts_with(kOld)) return std::nullopt;
  std::string_view rest = line.substr(kOld.size());  // P + " b/" + P
  if (rest.size() < kNew.size() || (rest.size() - kNew.size()) % 2 != 0) return std::nullopt;
  size_t length = (rest.size() - kNew.size()) / 2;
  std::string_view old_path = rest.substr(0, length), new_path = rest.substr(length + kNew.size());
  if (rest.substr(length, kNew.size()) != kNew || old_path != new_path || old_path.empty()) return std::nullopt;
  return std::string(old_path);
}

std::vector<FileSection> SplitDiff(std::string_view diff) {
  std::vector<FileSection> sections;
  for (size_t start = 0; start < diff.size();) {
    size_t end = diff.find('\n', start);
    end = end == std::string_view::npos ? diff.size() : end + 1;
    std::string_view line = diff.substr(start, end - start);
    start = end;
    // A body line starts with ' ', '+', '-' or '\', so neither marker can be a line of content.
    if (line.starts_with(kFileStart)) {
      std::string_view bare = line.substr(0, line.size() - (line.back() == '\n' ? 1 : 0));
      // Sections are matched with changes by the name the daemon gives them (its wire name).
      auto name = DiffGitPath(bare);
      sections.push_back({name ? sandboxd::api::WireName(*name) : "", std::string(line), {}});
    } else if (sections.empty()) {
      continue;
    } else if (line.starts_with("@@")) {
      sections.back().hunks.emplace_back(line);
    } else if (!sections.back().hunks.empty()) {
      sections.back().hunks.back() += line;
    } else {
      sections.back().header += line;
    }
  }
  return sections;
}

std::vector<FileSection> SectionsOfChange(const std::vector<FileSection>& sections, const std::string& change,
                                          const std::vector<std::string>& changes) {
  std::set<std::string> known(changes.begin(), changes.end());
  known.insert(change);
  std::vector<FileSection> own;
  for (const auto& section : sections) {
    auto owner = section.path.empty() ? std::nullopt : OwnerOf(section.path, known);
    if (!owner || *owner == change) own.push_back(section);
  }
  return own;
}

}  // namespace sandboxctl
