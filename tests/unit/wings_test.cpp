// The daemon's plan (docs/architecture.md, "Architecture"): one folder per concept, a wing, and includes
// between wings that follow the privilege boundary and never go round in a circle. Read from
// the source tree, so a new file or include that breaks the plan fails here, not in review.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sandboxd {
namespace {

namespace fs = std::filesystem;

const fs::path kDaemon = fs::path(SANDBOXD_SOURCE_DIR) / "daemon";

// What the owner-side programs are built from (daemon/meson.build's sandboxd-owner library):
// they run as the owner, and what they include must not reach the store, the registry or polkit.
const std::set<std::string> kOwnerSide = {"base", "model", "text", "helpers", "network"};

struct Include {
  std::string from_file;  ///< "bus/sandbox_dbus.cpp"
  std::string to_wing;
};

std::map<std::string, std::vector<Include>> WingIncludes() {
  static const std::regex kInclude(R"re(^#include "([a-z_]+)/[a-z_0-9]+\.h")re");
  std::map<std::string, std::vector<Include>> includes;
  for (const auto& wing : fs::directory_iterator(kDaemon)) {
    if (!wing.is_directory()) continue;
    std::string name = wing.path().filename();
    includes[name];
    for (const auto& file : fs::directory_iterator(wing.path())) {
      std::string ext = file.path().extension();
      if (ext != ".h" && ext != ".cpp") continue;
      std::ifstream in(file.path());
      std::string line;
      std::smatch match;
      while (std::getline(in, line))
        if (std::regex_search(line, match, kInclude) && match[1] != name)
          includes[name].push_back({name + "/" + file.path().filename().string(), match[1]});
    }
  }
  return includes;
}

TEST(WingsTest, EveryDaemonSourceIsInAWing) {
  for (const auto& entry : fs::directory_iterator(kDaemon)) {
    std::string name = entry.path().filename();
    if (entry.is_directory() || name == "meson.build" || name == "sanitizer_options.cpp") continue;
    ADD_FAILURE() << "daemon/" << name << " is in no wing: put it in the folder of its concept";
  }
  EXPECT_GE(WingIncludes().size(), kOwnerSide.size() + 5u) << "the wings were not found under " << kDaemon;
}

TEST(WingsTest, TheOwnerSideIncludesOnlyTheOwnerSide) {
  auto includes = WingIncludes();
  for (const auto& wing : kOwnerSide) {
    ASSERT_TRUE(includes.count(wing)) << "no wing daemon/" << wing;
    for (const auto& include : includes[wing])
      EXPECT_TRUE(kOwnerSide.count(include.to_wing))
          << include.from_file << " (owner side) includes " << include.to_wing << "/, which only the daemon may reach";
  }
}

TEST(WingsTest, OnlyTheDaemonItselfIncludesTheBusWing) {
  for (const auto& [wing, list] : WingIncludes())
    for (const auto& include : list)
      EXPECT_FALSE(include.to_wing == "bus" && wing != "service") << include.from_file << " includes the bus wing from below it";
}

TEST(WingsTest, WingsIncludeEachOtherWithoutACycle) {
  auto includes = WingIncludes();
  std::map<std::string, std::set<std::string>> edges;
  for (const auto& [wing, list] : includes)
    for (const auto& include : list) edges[wing].insert(include.to_wing);
  // Depth-first search; a wing met again while still on the path closes a cycle.
  std::map<std::string, int> state;  // 0 unvisited, 1 on the path, 2 done
  std::vector<std::string> path;
  std::function<void(const std::string&)> visit = [&](const std::string& wing) {
    state[wing] = 1;
    path.push_back(wing);
    for (const auto& next : edges[wing]) {
      if (state[next] == 1) {
        std::ostringstream cycle;
        for (const auto& on : path) cycle << on << " -> ";
        ADD_FAILURE() << "wings include each other in a cycle: " << cycle.str() << next;
      } else if (state[next] == 0) {
        visit(next);
      }
    }
    path.pop_back();
    state[wing] = 2;
  };
  for (const auto& [wing, list] : includes)
    if (state[wing] == 0) visit(wing);
}

}  // namespace
}  // namespace sandboxd
