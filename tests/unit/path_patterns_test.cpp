#include "path_patterns.h"

#include <gtest/gtest.h>

namespace sandboxctl {
namespace {

using Paths = std::vector<std::string>;

/// `pattern` matches each of `matched` and none of `missed`.
void ExpectMatches(const std::string& pattern, const Paths& matched, const Paths& missed = {}) {
  for (const auto& path : matched) EXPECT_TRUE(PatternMatches(pattern, path)) << "'" << pattern << "' should match " << path;
  for (const auto& path : missed) EXPECT_FALSE(PatternMatches(pattern, path)) << "'" << pattern << "' should not match " << path;
}

TEST(PathPatternsTest, APatternWithoutSlashMatchesTheLastComponentAtAnyDepth) {
  ExpectMatches("*.log", {"a.log", "sub/deep/b.log"}, {"a.log.txt", "log"});
  ExpectMatches("Makefile", {"Makefile", "src/Makefile"}, {"src/Makefile.am"});
}

TEST(PathPatternsTest, APatternWithSlashMatchesFromTheStart) {
  // "*" stays within one component; a leading "/" only anchors.
  ExpectMatches("build/*.o", {"build/a.o"}, {"src/build/a.o", "build/sub/a.o"});
  ExpectMatches("/a.log", {"a.log"}, {"sub/a.log"});
}

TEST(PathPatternsTest, DoubleStarMatchesAnyNumberOfWholeComponents) {
  // None is a number too: "node_modules/**" leaves node_modules itself out as well.
  ExpectMatches("node_modules/**", {"node_modules", "node_modules/x/y.js"}, {"src/node_modules/x"});
  ExpectMatches("**/test/*.c", {"test/a.c", "a/b/test/c.c"}, {"a/test/sub/c.h", "a/test.c"});
  ExpectMatches("a/**/z", {"a/z", "a/b/c/z"}, {"a/b/c/y", "b/a/z"});
  // Inside a component "**" is a plain "*".
  ExpectMatches("a**/z", {"ab/z"}, {"ab/c/z"});
}

// Found by fuzz_path_patterns: matching backtracked on every "**", exponential in their number
// (ten of them against a path 24 deep took seconds per path; this one took minutes).
TEST(PathPatternsTest, ManyDoubleStarsOnADeepPathAreAnsweredAtOnce) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "d/";
  std::string stars;
  for (int i = 0; i < 16; ++i) stars += "**/";
  EXPECT_FALSE(PatternMatches(stars + "x/y", deep + "z"));
  EXPECT_TRUE(PatternMatches(stars + "d/z", deep + "z"));
}

TEST(PathPatternsTest, WildcardsWorkWithinOneComponentAsFnmatch) {
  ExpectMatches("?.c", {"src/a.c"}, {"src/ab.c"});
  ExpectMatches("[ab].c", {"b.c"}, {"c.c"});
  ExpectMatches("[!ab].c", {"c.c"}, {"a.c"});
  ExpectMatches("*.log", {".hidden.log"});  // no FNM_PERIOD
}

TEST(PathPatternsTest, APatternThatMatchesADirectoryMatchesEverythingBeneathIt) {
  ExpectMatches("node_modules", {"node_modules/x/y.js", "web/node_modules/x/y.js"}, {"node_modules.txt"});
  ExpectMatches("build/", {"build/out/a.o", "src/build/a.o"});  // a trailing "/" is ignored
  ExpectMatches("src/*", {"src/lib/a.c"}, {"src"});
  ExpectMatches("src/lib", {"src/lib/a.c"}, {"src", "src/library"});
}

TEST(PathPatternsTest, MultiRootPathsCarryTheirRootPrefix) {
  ExpectMatches("*.log", {"1/sub/a.log"});
  ExpectMatches("src/**", {}, {"1/src/a.c"});
  ExpectMatches("*/src/**", {"0/src", "1/src/a.c"});
}

TEST(PathPatternsTest, AnEmptyPatternMatchesNothing) {
  ExpectMatches("", {}, {"a", "."});
  ExpectMatches("/", {}, {"a"});
  ExpectMatches("**", {"a", "a/b"});
}

TEST(PathPatternsTest, APathPassesOneIncludeAndNoExclude) {
  EXPECT_TRUE(PathPatterns().empty());
  EXPECT_TRUE(PathPatterns().Passes("anything"));

  PathPatterns excludes({}, {"*.log", "node_modules/**"});
  EXPECT_FALSE(excludes.empty());
  for (const char* path : {"src/main.c", "sub"}) EXPECT_TRUE(excludes.Passes(path)) << path;
  for (const char* path : {"sub/b.log", "node_modules", "node_modules/x/y.js"}) EXPECT_FALSE(excludes.Passes(path)) << path;

  // An exclude wins over an include.
  PathPatterns both({"src/**", "*.md"}, {"*.o"});
  for (const char* path : {"src/a.c", "docs/README.md"}) EXPECT_TRUE(both.Passes(path)) << path;
  for (const char* path : {"src/a.o", "lib/a.c"}) EXPECT_FALSE(both.Passes(path)) << path;
}

TEST(PathPatternsTest, DescribeShowsThePatternsAsTyped) {
  EXPECT_EQ(PathPatterns({"*.c"}, {"x/**", "*.log"}).Describe(), "--include '*.c' --exclude 'x/**' --exclude '*.log'");
  EXPECT_EQ(PathPatterns().Describe(), "");
}

}  // namespace
}  // namespace sandboxctl
