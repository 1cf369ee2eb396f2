// The README and the pages under docs/ against the tree they describe: the README stays a front
// door (short, two commands, a link to every page), every link between the pages leads to a
// file and a heading that are there, every source path a page names exists, and every section
// the sources cite ("docs/security.md, "Renames"") is in the page they cite. Files and headings
// move (issue 44 moved most of the README into docs/); this is what keeps the pages true.
// No daemon: these tests read files only.

#include <dirent.h>
#include <sys/stat.h>

#include <cctype>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace sandboxd::it {
namespace {

/// The pages: README.md and docs/*.md, as paths relative to the source tree.
std::vector<std::string> Pages() {
  std::vector<std::string> pages = {"README.md"};
  if (DIR* dir = opendir((kSourceDir + "/docs").c_str())) {
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name.size() > 3 && name.ends_with(".md")) pages.push_back("docs/" + name);
    }
    closedir(dir);
  }
  return pages;
}

bool IsInTree(const std::string& relative) {
  struct stat st;
  return stat((kSourceDir + "/" + relative).c_str(), &st) == 0;
}

/// The text of a page outside its ``` blocks, line by line.
std::vector<std::string> ProseLines(const std::string& page) {
  std::vector<std::string> prose;
  bool literal = false;
  for (const auto& line : Lines(page)) {
    if (line.starts_with("```")) {
      literal = !literal;
      continue;
    }
    if (!literal) prose.push_back(line);
  }
  return prose;
}

/// GitHub's anchor for a heading: lower case, spaces to '-', everything but letters, digits,
/// '-' and '_' dropped.
std::string Anchor(const std::string& heading) {
  std::string anchor;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_') anchor += static_cast<char>(std::tolower(c));
    else if (c == ' ') anchor += '-';
  }
  return anchor;
}

std::set<std::string> AnchorsOf(const std::string& page) {
  std::set<std::string> anchors;
  for (const auto& line : ProseLines(ReadWhole(kSourceDir + "/" + page))) {
    size_t hashes = line.find_first_not_of('#');
    if (hashes > 0 && hashes != std::string::npos && line[hashes] == ' ') anchors.insert(Anchor(line.substr(hashes + 1)));
  }
  return anchors;
}

/// `page`'s directory, relative to the source tree ("" or "docs/").
std::string DirOf(const std::string& page) {
  size_t slash = page.rfind('/');
  return slash == std::string::npos ? "" : page.substr(0, slash + 1);
}

/// "docs/../README.md" as "README.md".
std::string Normal(std::string path) {
  for (size_t at; (at = path.find("docs/../")) != std::string::npos;) path.erase(at, 8);
  return path;
}

TEST(DocPagesTest, TheReadmeIsAShortFrontDoorWithTwoCommandsAndAWayToEveryPage) {
  std::string readme = ReadWhole(kSourceDir + "/README.md");
  ASSERT_FALSE(readme.empty());
  auto lines = Lines(readme);
  EXPECT_LE(lines.size(), 300u) << "the README is a front door: its depth goes to docs/";
  // The Quick start's block holds exactly two commands.
  size_t start = readme.find("## Quick start");
  ASSERT_NE(start, std::string::npos);
  size_t block = readme.find("```sh\n", start);
  ASSERT_NE(block, std::string::npos);
  size_t end = readme.find("```", block + 6);
  std::vector<std::string> commands;
  for (const auto& line : Lines(readme.substr(block + 6, end - block - 6)))
    if (!line.empty() && line[0] != '#') commands.push_back(line);
  EXPECT_EQ(commands.size(), 2u) << readme.substr(block, end - block);
  for (const auto& page : Pages())
    if (page != "README.md") EXPECT_TRUE(Contains(readme, "](" + page + ")")) << "the README has no link to " << page;
  // Whoever reads only the README learns what runs as root, and why.
  EXPECT_TRUE(Contains(readme, "## What runs as root, and why"));
}

TEST(DocPagesTest, EveryLinkBetweenThePagesLeadsToAFileAndAHeadingThatAreThere) {
  const std::regex link(R"(\]\(([^)\s]+)\))");
  size_t checked = 0;
  for (const auto& page : Pages()) {
    for (const auto& line : ProseLines(ReadWhole(kSourceDir + "/" + page))) {
      for (std::sregex_iterator it(line.begin(), line.end(), link), done; it != done; ++it) {
        std::string target = (*it)[1];
        if (target.find("://") != std::string::npos || target.starts_with("mailto:")) continue;
        std::string file = target.substr(0, target.find('#'));
        std::string anchor = target.find('#') == std::string::npos ? "" : target.substr(target.find('#') + 1);
        std::string path = file.empty() ? page : Normal(DirOf(page) + file);
        ++checked;
        EXPECT_TRUE(IsInTree(path)) << page << " links to " << target << ": no " << path;
        if (!anchor.empty() && path.ends_with(".md"))
          EXPECT_TRUE(AnchorsOf(path).count(anchor)) << page << " links to " << target << ": " << path << " has no such heading";
      }
    }
  }
  EXPECT_GT(checked, 10u);
}

TEST(DocPagesTest, EverySourcePathThePagesNameExists) {
  // A path in backquotes that starts with one of the tree's folders, with no pattern in it.
  const std::regex named(
      R"(`((daemon|client|bindings|dbus|man|tests|fuzz|bench|scripts|docs|policy|systemd|shell-completion)/[A-Za-z0-9_./-]*)`)");
  size_t checked = 0;
  for (const auto& page : Pages()) {
    std::string text = ReadWhole(kSourceDir + "/" + page);
    for (std::sregex_iterator it(text.begin(), text.end(), named), done; it != done; ++it) {
      std::string path = (*it)[1];
      ++checked;
      EXPECT_TRUE(IsInTree(path)) << page << " names " << path << ", which is not in the tree";
    }
  }
  EXPECT_GT(checked, 20u);
}

/// Files of ours under `dir` (relative to the source tree) whose names end in one of `endings`;
/// npm's folder is not ours.
void SourcesUnder(const std::string& dir, std::vector<std::string>& found) {
  DIR* listing = opendir((kSourceDir + "/" + dir).c_str());
  if (!listing) return;
  while (dirent* entry = readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == ".." || name == "node_modules") continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (lstat((kSourceDir + "/" + path).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) SourcesUnder(path, found);
    else if (S_ISREG(st.st_mode) && st.st_size < (1 << 20)) found.push_back(path);
  }
  closedir(listing);
}

TEST(DocPagesTest, EverySectionTheSourcesCiteIsInThePageTheyCite) {
  std::vector<std::string> sources;
  for (const char* dir : {"daemon", "client", "bindings", "tests", "bench", "scripts", "fuzz", "dbus", "man"}) SourcesUnder(dir, sources);
  // (docs/security.md, "Renames") or (README, "Quick start"): the quoted words are in that page.
  const std::regex cited(R"((README|docs/[a-z-]+\.md),? "([^"]{3,80})\")");
  size_t checked = 0;
  for (const auto& source : sources) {
    std::string text = ReadWhole(kSourceDir + "/" + source);
    for (std::sregex_iterator it(text.begin(), text.end(), cited), done; it != done; ++it) {
      std::string page = (*it)[1] == "README" ? "README.md" : std::string((*it)[1]);
      std::string words = (*it)[2];
      ++checked;
      EXPECT_TRUE(Contains(ReadWhole(kSourceDir + "/" + page), words))
          << source << " cites " << page << ", \"" << words << "\", which is not in it";
    }
  }
  EXPECT_GT(checked, 5u);
}

}  // namespace
}  // namespace sandboxd::it
