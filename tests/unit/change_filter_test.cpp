#include "change_filter.h"

#include <gtest/gtest.h>

namespace sandboxctl {
namespace {

using Selectors = std::vector<std::string>;
using sandboxd::api::Selector;

/// Selectors as the tests write them: "PATH:N" a hunk, anything else a change or directory.
std::vector<Selector> Typed(const Selectors& texts) {
  std::vector<Selector> selectors;
  for (const auto& text : texts) {
    auto hunk = sandboxd::api::ParseHunkSelector(text);
    selectors.push_back(hunk ? *hunk : Selector{text});
  }
  return selectors;
}

/// NarrowSelectors over selectors written as Typed reads them, answering as ToString writes them.
Selectors Narrow(const std::vector<ChangeEntry>& changes, const Selectors& texts, const PathPatterns& patterns,
                 const ReviewFilter& acts_on = {}) {
  Selectors shown;
  for (const auto& selector : NarrowSelectors(changes, Typed(texts), patterns, acts_on)) shown.push_back(sandboxd::api::ToString(selector));
  return shown;
}

/// The integration tests' job, as the scanner lists it: parents before children.
std::vector<ChangeEntry> JobChanges() {
  return {{"a.log", "pending"},          {"node_modules", "pending"}, {"node_modules/x", "pending"},
          {"node_modules/x/y.js", "pending"}, {"src", "pending"},     {"src/main.c", "pending"},
          {"sub", "pending"},            {"sub/b.log", "pending"}};
}

TEST(ChangeFilterTest, AWhollyPassingDirectoryIsNamedOnce) {
  EXPECT_EQ(Narrow(JobChanges(), {}, PathPatterns({}, {"node_modules/**"})), (Selectors{"a.log", "src", "sub"}));
  EXPECT_EQ(Narrow(JobChanges(), {}, PathPatterns({"src/**"}, {})), (Selectors{"src"}));
}

TEST(ChangeFilterTest, ADirectoryHoldingALeftOutChangeIsNotNamed) {
  // "sub" passes, but naming it would take sub/b.log as well.
  EXPECT_EQ(Narrow(JobChanges(), {}, PathPatterns({}, {"*.log", "node_modules/**"})), (Selectors{"src"}));
  // "src" does not match *.c; src/main.c goes alone.
  EXPECT_EQ(Narrow(JobChanges(), {}, PathPatterns({"*.c"}, {})), (Selectors{"src/main.c"}));
}

TEST(ChangeFilterTest, NothingPassingLeavesNoSelector) {
  EXPECT_TRUE(Narrow(JobChanges(), {}, PathPatterns({"*.rs"}, {})).empty());
  EXPECT_TRUE(Narrow({}, {}, PathPatterns({}, {"*.log"})).empty());
}

TEST(ChangeFilterTest, PatternsNarrowWhatSelectorsNameAndNeverWidenIt) {
  PathPatterns logs({"*.log"}, {});
  EXPECT_EQ(Narrow(JobChanges(), {"sub"}, logs), (Selectors{"sub/b.log"}));
  EXPECT_TRUE(Narrow(JobChanges(), {"src"}, logs).empty());
  // "sub/" names what lies beneath sub, not sub itself, as the daemon reads it.
  EXPECT_EQ(Narrow(JobChanges(), {"sub/"}, PathPatterns({}, {"*.c"})), (Selectors{"sub/b.log"}));
  // A change named only by one selector of several.
  EXPECT_EQ(Narrow(JobChanges(), {"a.log", "src/main.c"}, PathPatterns({}, {"src/**"})), (Selectors{"a.log"}));
}

TEST(ChangeFilterTest, TheRootSelectorNamesEverything) {
  std::vector<ChangeEntry> changes = {{".", "pending"}, {"a.c", "pending"}, {"b.log", "pending"}};
  // The root's own change (a new mode) passes but cannot go alone: "." would take b.log.
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({}, {"*.log"})), (Selectors{"a.c"}));
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({}, {"*.o"})), (Selectors{"."}));
}

TEST(ChangeFilterTest, HunkSelectorsStayWhenTheirPathPasses) {
  std::vector<ChangeEntry> changes = {{"a.c", "pending"}, {"b.log", "pending"}};
  PathPatterns no_logs({}, {"*.log"});
  EXPECT_EQ(Narrow(changes, {"a.c:2", "b.log:1"}, no_logs), (Selectors{"a.c:2"}));
  // A file really named "a.c:2" is named whole by a whole selector, never by hunk 2 of a.c.
  changes.push_back({"a.c:2", "pending"});
  auto file = NarrowSelectors(changes, {Selector{"a.c:2"}}, no_logs);
  ASSERT_EQ(file.size(), 1u);
  EXPECT_EQ(file[0].path, "a.c:2");
  EXPECT_FALSE(file[0].hunk);
  EXPECT_TRUE(NarrowSelectors(changes, {Selector{"a.c:2"}}, PathPatterns({}, {"*:2"})).empty());
  auto hunk = NarrowSelectors(changes, {Selector{"a.c", 2}}, PathPatterns({}, {"*:2"}));
  ASSERT_EQ(hunk.size(), 1u);
  EXPECT_EQ(hunk[0].path, "a.c");
  EXPECT_EQ(hunk[0].hunk, 2);
}

TEST(ChangeFilterTest, ASelectorThatNamesNothingStaysForTheDaemonToRefuse) {
  EXPECT_EQ(Narrow(JobChanges(), {"nope", "src"}, PathPatterns({"*.c"}, {})), (Selectors{"src/main.c", "nope"}));
}

TEST(ChangeFilterTest, MultiRootPathsAndTheirRoots) {
  std::vector<ChangeEntry> changes = {{"0/a.c", "pending"}, {"1", "pending"}, {"1/a.c", "pending"}, {"1/b.log", "pending"}};
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({}, {"*.log"})), (Selectors{"0/a.c", "1/a.c"}));
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({"1/**"}, {})), (Selectors{"1"}));
}

TEST(ChangeFilterTest, CommitTakesApprovedChangesAndPendingOnesWithAll) {
  std::vector<ChangeEntry> changes = {{"a.c", "approved"}, {"b.c", "pending"}, {"c.c", "rejected"}, {"d.c", "partial"},
                                      {"e.log", "approved"}};
  PathPatterns no_logs({}, {"*.log"});
  auto approved = [](const std::string& review) { return CommitTakes(review, false); };
  auto with_all = [](const std::string& review) { return CommitTakes(review, true); };
  EXPECT_EQ(Narrow(changes, {}, no_logs, approved), (Selectors{"a.c", "d.c"}));
  EXPECT_EQ(Narrow(changes, {}, no_logs, with_all), (Selectors{"a.c", "b.c", "d.c"}));
}

TEST(ChangeFilterTest, AnApprovedDirectoryCoversItsChangesForACommit) {
  // The daemon commits only the approved changes a selector names: the pending file beneath
  // the approved directory stays, whichever of them the selector names.
  std::vector<ChangeEntry> changes = {{"d", "approved"}, {"d/x", "approved"}, {"d/y", "pending"}, {"e", "pending"},
                                      {"e/z", "approved"}};
  auto approved = [](const std::string& review) { return CommitTakes(review, false); };
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({"*"}, {}), approved), (Selectors{"d", "e/z"}));
}

TEST(ChangeFilterTest, ARenameIsLeftOutWhenEitherOfItsPathsIsExcluded) {
  // The daemon takes both halves of a rename when either is named: naming the half that passes
  // would carry the excluded one along.
  std::vector<ChangeEntry> changes = {{"build/out.o", "pending", "src/out.o"}, {"keep.c", "pending"},
                                      {"src/out.o", "pending", "build/out.o"}};
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({}, {"build/**"})), (Selectors{"keep.c"}));
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({"src/**"}, {})), (Selectors{}));
  EXPECT_EQ(Narrow(changes, {}, PathPatterns({"*.o"}, {})), (Selectors{"build/out.o", "src/out.o"}));
}

}  // namespace
}  // namespace sandboxctl
