// The daemon's plan (docs/architecture.md, "Folders by privilege"): source filed by the uid that
// runs it first (a side: daemon/as_root/, daemon/as_owner/, ...), by concept second (a wing),
// includes that cross no side they may not, and wings that never include each other in a
// circle. Read from the source tree and from meson's own introspection of this build, so a new
// file, include, program or link that breaks the plan fails here, not in review.
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

#include <nlohmann/json.hpp>

#include "../readme_runs_as.h"

namespace sandboxd {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = SANDBOXD_SOURCE_DIR;
const fs::path kDaemon = kSource / "daemon";
const fs::path kBuild = SANDBOXD_BUILD_DIR;

/// Each side: the words the README's table "What runs as root, and why" gives for the uid its
/// programs run as, and the sides its code may include besides its own.
struct Side {
  std::string runs_as;
  std::set<std::string> may_include;
};
const std::map<std::string, Side> kSides = {
    {"shared", {"", {}}},
    {"as_owner", {"the owner", {"shared"}}},
    {"as_root_with_owner_fsuid", {"root's uid, the owner's file-system identity, few capabilities", {"shared"}}},
    {"as_root", {"root", {"shared"}}},
};

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Every wing: its name and its side.
std::map<std::string, std::string> WingSides() {
  std::map<std::string, std::string> wings;
  for (const auto& [side, unused] : kSides) {
    if (!fs::is_directory(kDaemon / side)) continue;
    for (const auto& wing : fs::directory_iterator(kDaemon / side))
      if (wing.is_directory()) wings.emplace(wing.path().filename(), side);
  }
  return wings;
}

struct Include {
  std::string from_file;  ///< "as_root/bus/sandbox_dbus.cpp"
  std::string from_wing;
  std::string written;    ///< "store/store.h"
};

/// Every quoted include of every daemon source.
std::vector<Include> DaemonIncludes() {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Include> includes;
  for (const auto& file : fs::recursive_directory_iterator(kDaemon)) {
    std::string ext = file.path().extension();
    if (ext != ".h" && ext != ".cpp") continue;
    fs::path relative = fs::relative(file.path(), kDaemon);
    std::string wing = relative.has_parent_path() ? relative.parent_path().filename().string() : "";
    std::istringstream in(ReadAll(file.path()));
    std::string line;
    std::smatch match;
    while (std::getline(in, line))
      if (std::regex_search(line, match, kInclude)) includes.push_back({relative.string(), wing, match[1]});
  }
  return includes;
}

/// The wing an include names ("store" of "store/store.h"), or "" for a header of no wing
/// (bindings' unique_fd.h, the build's config.h).
std::string WingOf(const std::string& written) {
  size_t slash = written.find('/');
  return slash == std::string::npos ? "" : written.substr(0, slash);
}

TEST(WingsTest, EveryDaemonSourceIsInAWingOfASide) {
  for (const auto& entry : fs::directory_iterator(kDaemon)) {
    std::string name = entry.path().filename();
    if (name == "meson.build" || name == "sanitizer_options.cpp") continue;
    EXPECT_TRUE(entry.is_directory() && kSides.count(name))
        << "daemon/" << name << " is not a side: file it by who runs it (daemon/as_root/, as_owner/, "
        << "as_root_with_owner_fsuid/ or shared/), then in the wing of its concept";
  }
  for (const auto& [side, unused] : kSides) {
    ASSERT_TRUE(fs::is_directory(kDaemon / side)) << "no side daemon/" << side;
    for (const auto& entry : fs::directory_iterator(kDaemon / side))
      EXPECT_TRUE(entry.is_directory()) << "daemon/" << side << "/" << entry.path().filename().string()
                                        << " is in no wing: put it in the folder of its concept";
  }
  EXPECT_GE(WingSides().size(), 15u) << "the wings were not found under " << kDaemon;
}

TEST(WingsTest, AWingNameIsOneWingOnEverySide) {
  std::map<std::string, std::vector<std::string>> sides_of;
  for (const auto& [side, unused] : kSides)
    for (const auto& wing : fs::directory_iterator(kDaemon / side))
      if (wing.is_directory()) sides_of[wing.path().filename()].push_back(side);
  for (const auto& [wing, sides] : sides_of)
    EXPECT_EQ(sides.size(), 1u) << "two wings are named " << wing << ": an include \"" << wing
                                << "/...\" would name either";
}

TEST(WingsTest, AnIncludeNamesAWingNeverAParent) {
  auto wings = WingSides();
  for (const auto& include : DaemonIncludes()) {
    EXPECT_EQ(include.written.find(".."), std::string::npos)
        << include.from_file << " includes \"" << include.written << "\": name the wing, not a path up to it";
    std::string wing = WingOf(include.written);
    EXPECT_TRUE(wing.empty() || wings.count(wing))
        << include.from_file << " includes \"" << include.written << "\", which names no wing";
  }
}

TEST(WingsTest, EachSideIncludesOnlyItselfAndWhatItMayReach) {
  auto wings = WingSides();
  size_t crossings = 0;
  for (const auto& include : DaemonIncludes()) {
    if (!wings.count(include.from_wing)) continue;  // sanitizer_options.cpp, at the top
    std::string from_side = wings[include.from_wing];
    std::string wing = WingOf(include.written);
    if (wing.empty() || !wings.count(wing)) continue;
    std::string to_side = wings[wing];
    if (to_side != from_side) ++crossings;
    EXPECT_TRUE(to_side == from_side || kSides.at(from_side).may_include.count(to_side))
        << include.from_file << " (run by " << from_side << "/) includes " << include.written << " of " << to_side
        << "/, which its side may not reach";
  }
  EXPECT_GT(crossings, 50u) << "the includes across sides were not found";
}

TEST(WingsTest, OnlyTheDaemonItselfIncludesTheBusWing) {
  for (const auto& include : DaemonIncludes())
    EXPECT_FALSE(WingOf(include.written) == "bus" && include.from_wing != "bus" && include.from_wing != "service")
        << include.from_file << " includes the bus wing from below it";
}

TEST(WingsTest, WingsIncludeEachOtherWithoutACycle) {
  auto wings = WingSides();
  std::map<std::string, std::set<std::string>> edges;
  for (const auto& include : DaemonIncludes()) {
    std::string wing = WingOf(include.written);
    if (wings.count(include.from_wing) && wings.count(wing) && wing != include.from_wing)
      edges[include.from_wing].insert(wing);
  }
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
  for (const auto& [wing, unused] : wings)
    if (state[wing] == 0) visit(wing);
}

// --- The programs, as meson builds them ---

std::map<std::string, std::string> ReadmeRunsAs() { return ReadmeRunsAsTable((kSource / "README.md").string()); }

nlohmann::json IntroTargets() {
  std::ifstream in(kBuild / "meson-info" / "intro-targets.json");
  nlohmann::json targets = nlohmann::json::parse(in, nullptr, false);
  if (!targets.is_array()) {
    ADD_FAILURE() << "meson's introspection of " << kBuild << " could not be read";
    return nlohmann::json::array();
  }
  return targets;
}

/// A target's own sources, below the source tree. A unity build lists the files it generated;
/// each includes the sources it compiles as one, by their absolute paths.
std::vector<fs::path> SourcesOf(const nlohmann::json& target) {
  std::vector<fs::path> sources;
  static const std::regex kUnityLine(R"re(^#include\s*[<"]([^>"]+)[>"])re");
  for (const auto& group : target["target_sources"]) {
    for (const auto& source : group.value("sources", nlohmann::json::array())) sources.emplace_back(source.get<std::string>());
    for (const auto& generated : group.value("generated_sources", nlohmann::json::array())) {
      std::string name = fs::path(generated.get<std::string>()).filename().string();
      if (name.find("-unity") == std::string::npos) continue;
      std::istringstream in(ReadAll(generated.get<std::string>()));
      std::string line;
      std::smatch match;
      while (std::getline(in, line))
        if (std::regex_search(line, match, kUnityLine)) sources.emplace_back(match[1].str());
    }
  }
  return sources;
}

/// A target's include directories below the source tree ("daemon/as_owner"), from its compiler's
/// parameters.
std::set<std::string> SourceIncludeDirs(const nlohmann::json& target) {
  std::set<std::string> dirs;
  for (const auto& group : target["target_sources"])
    for (const auto& parameter : group.value("parameters", nlohmann::json::array())) {
      std::string text = parameter.get<std::string>();
      if (text.rfind("-I", 0) != 0) continue;
      fs::path dir = fs::weakly_canonical(text.substr(2));
      std::string relative = fs::relative(dir, kSource).string();
      if (relative.rfind("..", 0) != 0 && dir.string().rfind(kBuild.string(), 0) != 0) dirs.insert(relative);
    }
  return dirs;
}

/// The static libraries a program links, by the file each is built as: from ninja's own link
/// line for it, which meson wrote (its introspection of 1.0 does not list a target's links).
std::set<std::string> LinkedLibraries(const std::string& program_file) {
  std::string relative = fs::relative(program_file, kBuild).string();
  std::istringstream in(ReadAll(kBuild / "build.ninja"));
  std::string line;
  std::set<std::string> libraries;
  while (std::getline(in, line)) {
    if (line.rfind("build " + relative + ": ", 0) != 0) continue;
    std::istringstream words(line);
    std::string word;
    while (words >> word)
      if (word.size() > 2 && word.compare(word.size() - 2, 2, ".a") == 0) libraries.insert((kBuild / word).lexically_normal().string());
  }
  return libraries;
}

/// The side a path of the source tree is filed in, or "" when it is not below daemon/<side>/.
std::string SideOf(const fs::path& path) {
  fs::path relative = fs::relative(fs::weakly_canonical(path), kDaemon);
  std::string first = relative.begin() == relative.end() ? "" : relative.begin()->string();
  return kSides.count(first) ? first : "";
}

TEST(WingsTest, EveryProgramIsBuiltOnlyFromItsSideAndShared) {
  nlohmann::json targets = IntroTargets();
  std::map<std::string, const nlohmann::json*> by_file;
  for (const auto& target : targets)
    for (const auto& file : target["filename"]) by_file[fs::path(file.get<std::string>()).lexically_normal().string()] = &target;
  auto runs_as = ReadmeRunsAs();
  ASSERT_GE(runs_as.size(), 8u) << "the README's table \"What runs as root, and why\" was not found";

  size_t programs = 0;
  for (const auto& target : targets) {
    if (target["type"].get<std::string>() != "executable" || !target["installed"].get<bool>()) continue;
    if (fs::path(target["defined_in"].get<std::string>()).parent_path() != kDaemon) continue;
    std::string name = target["name"].get<std::string>();
    ++programs;
    ASSERT_TRUE(runs_as.count(name)) << name << " is installed but the README's table \"What runs as root, and why\" "
                                     << "does not say what it runs as";
    std::string side;
    for (const auto& [folder, about] : kSides)
      if (!about.runs_as.empty() && about.runs_as == runs_as[name]) side = folder;
    ASSERT_FALSE(side.empty()) << "the README says " << name << " runs as \"" << runs_as[name]
                               << "\", which no side of daemon/ is for";

    // The program's own sources (but for the sanitizers' options, in sanitized builds only),
    // then the sources of every library it links.
    std::vector<std::pair<std::string, const nlohmann::json*>> parts = {{name, &target}};
    for (const auto& library : LinkedLibraries(target["filename"][0].get<std::string>()))
      if (by_file.count(library)) parts.push_back({(*by_file[library])["name"].get<std::string>(), by_file[library]});
    size_t own_sources = 0;
    for (const auto& [part, part_target] : parts) {
      bool own = part_target == &target;
      for (const auto& source : SourcesOf(*part_target)) {
        if (source.filename() == "sanitizer_options.cpp" || SideOf(source).empty()) continue;
        if (own) ++own_sources;
        std::string source_side = SideOf(source);
        EXPECT_TRUE(own ? source_side == side : (source_side == side || source_side == "shared"))
            << name << " (runs as " << runs_as[name] << ": daemon/" << side << "/) is built from " << source << " of daemon/"
            << source_side << "/" << (own ? "" : " (through " + part + ")");
      }
      for (const auto& dir : SourceIncludeDirs(*part_target)) {
        std::string dir_side = SideOf(kSource / dir);
        bool daemon_itself = fs::weakly_canonical(kSource / dir) == fs::weakly_canonical(kDaemon);
        EXPECT_FALSE(daemon_itself || (!dir_side.empty() && dir_side != side && dir_side != "shared"))
            << name << " (daemon/" << side << "/) is compiled" << (own ? "" : " (" + part + ")") << " with -I " << dir
            << ": its code could name another side's headers";
      }
    }
    EXPECT_GE(own_sources, 1u) << name << ": its sources were not found in meson's introspection";
  }
  EXPECT_GE(programs, 8u) << "the daemon's programs were not found in meson's introspection of " << kBuild;
}

TEST(WingsTest, EveryProgramTheReadmeNamesIsBuilt) {
  std::set<std::string> built;
  for (const auto& target : IntroTargets())
    if (target["type"].get<std::string>() == "executable" && target["installed"].get<bool>()) built.insert(target["name"].get<std::string>());
  for (const auto& [program, uid] : ReadmeRunsAs())
    if (program.rfind("sandbox", 0) == 0)
      EXPECT_TRUE(built.count(program)) << "the README's table names " << program << ", which the build does not make";
}

}  // namespace
}  // namespace sandboxd
