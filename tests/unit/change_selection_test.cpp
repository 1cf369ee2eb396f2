#include "changes/change_selection.h"
#include "selectors_of.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "selector.h"

namespace sandboxd {
namespace {

Change Make(const std::string& path, ChangeKind kind = ChangeKind::kModified) {
  Change c;
  c.path = path;
  c.kind = kind;
  return c;
}

TEST(SelectChangesTest, EmptySelectorsSelectEverything) {
  std::vector<RootChanges> all = {{0, {Make("a"), Make("b/c")}}};
  auto selected = SelectChanges(all, {}, {""}, "id");
  ASSERT_EQ(selected.size(), 1u);
  EXPECT_EQ(selected[0].changes.size(), 2u);
}

TEST(SelectChangesTest, PathDirectoryAndHunkSelectors) {
  std::vector<RootChanges> all = {{0, {Make("a"), Make("b/c"), Make("b/d"), Make("bb")}}};
  auto by_dir = SelectChanges(all, SelectorsOf({"b/"}), {""}, "id");
  ASSERT_EQ(by_dir[0].changes.size(), 2u);
  EXPECT_EQ(by_dir[0].changes[0].path, "b/c");
  auto by_hunk = SelectChanges(all, SelectorsOf({"a:2"}), {""}, "id");
  ASSERT_EQ(by_hunk[0].changes.size(), 1u);
  EXPECT_EQ(by_hunk[0].changes[0].path, "a");
}

TEST(SelectChangesTest, MultiRootPrefixes) {
  std::vector<RootChanges> all = {{0, {Make("x")}}, {1, {Make("x")}}};
  auto selected = SelectChanges(all, SelectorsOf({"1/x"}), {"0/", "1/"}, "id");
  EXPECT_TRUE(selected[0].changes.empty());
  EXPECT_EQ(selected[1].changes.size(), 1u);
}

TEST(SelectChangesTest, UnknownSelectorIsNamedInTheError) {
  std::vector<RootChanges> all = {{0, {Make("a")}}};
  try {
    SelectChanges(all, SelectorsOf({"nope.txt"}), {""}, "3fa2");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_NE(std::string(e.what()).find("nope.txt"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("3fa2"), std::string::npos);
  }
}

TEST(ParseHunkSelectorTest, Forms) {
  auto s = api::ParseHunkSelector("src/a.c:12");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->path, "src/a.c");
  EXPECT_EQ(s->hunk, 12);
  EXPECT_FALSE(api::ParseHunkSelector("src/a.c"));
  EXPECT_FALSE(api::ParseHunkSelector("a:0"));
  EXPECT_FALSE(api::ParseHunkSelector("a:x"));
  EXPECT_FALSE(api::ParseHunkSelector(":3"));
  EXPECT_EQ(s->part, 0);
}

TEST(ParseHunkSelectorTest, PartsOfAHunk) {
  auto s = api::ParseHunkSelector("src/a.c:12.3");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->path, "src/a.c");
  EXPECT_EQ(s->hunk, 12);
  EXPECT_EQ(s->part, 3);
  EXPECT_EQ(api::ToString(s->ref()), "12.3");
  for (const char* wrong : {"a:1.", "a:.1", "a:1.0", "a:1.x", "a:1.2.3", "a:1.-2", "a:1. 2"})
    EXPECT_FALSE(api::ParseHunkSelector(wrong)) << wrong;
  // A name with a dot before the colon is a name: the part is after the last colon only.
  auto dotted = api::ParseHunkSelector("v1.2:4.1");
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->path, "v1.2");
  EXPECT_EQ(dotted->ref(), (api::HunkRef{4, 1}));
}

TEST(DisplayPathTest, RootItself) {
  EXPECT_EQ(DisplayPath(Make("."), ""), ".");
  EXPECT_EQ(DisplayPath(Make("."), "1/"), "1");
  EXPECT_EQ(DisplayPath(Make("a/b"), "1/"), "1/a/b");
}

std::vector<std::string> Paths(const RootChanges& root) {
  std::vector<std::string> paths;
  for (const auto& change : root.changes) paths.push_back(change.path);
  return paths;
}

/// One root, in scan order: a rename's added half (new.txt) sorts before its deleted half.
std::vector<RootChanges> WithARename() {
  return {{0, {Make("a"), Make("new.txt", ChangeKind::kAdded), Make("old.txt", ChangeKind::kDeleted), Make("z")}}};
}

TEST(AddRenamePartnersTest, EitherHalfSelectedTakesTheOtherInScanOrder) {
  auto all = WithARename();
  SandboxRenames renames = {{0, {{"old.txt", "new.txt"}}}};
  for (const char* half : {"old.txt", "new.txt"}) {
    auto selected = SelectChanges(all, SelectorsOf({half}), {""}, "id");
    AddRenamePartners(all, renames, selected);
    ASSERT_EQ(selected.size(), 1u);
    EXPECT_EQ(Paths(selected[0]), (std::vector<std::string>{"new.txt", "old.txt"})) << half;
  }
  // With other changes selected around it, the scan order still holds.
  auto selected = SelectChanges(all, SelectorsOf({"z", "old.txt", "a"}), {""}, "id");
  AddRenamePartners(all, renames, selected);
  EXPECT_EQ(Paths(selected[0]), (std::vector<std::string>{"a", "new.txt", "old.txt", "z"}));
  EXPECT_EQ(selected[0].changes[1], all[0].changes[1]);  // the change itself, not only its path
}

TEST(AddRenamePartnersTest, ARenameOfOneRootDoesNotReachIntoAnother) {
  // Root 1 has an old.txt deleted as well, but no new.txt and no rename.
  std::vector<RootChanges> all = {{0, {Make("new.txt", ChangeKind::kAdded), Make("old.txt", ChangeKind::kDeleted)}},
                                  {1, {Make("old.txt", ChangeKind::kDeleted), Make("x")}}};
  SandboxRenames renames = {{0, {{"old.txt", "new.txt"}}}};
  auto selected = SelectChanges(all, SelectorsOf({"1/old.txt"}), {"0/", "1/"}, "id");
  AddRenamePartners(all, renames, selected);
  EXPECT_TRUE(selected[0].changes.empty());
  EXPECT_EQ(Paths(selected[1]), (std::vector<std::string>{"old.txt"}));
  // Root 0's halves come from root 0's changes, never from another root's same paths.
  selected = SelectChanges(all, SelectorsOf({"0/old.txt"}), {"0/", "1/"}, "id");
  AddRenamePartners(all, renames, selected);
  EXPECT_EQ(Paths(selected[0]), (std::vector<std::string>{"new.txt", "old.txt"}));
  EXPECT_TRUE(selected[1].changes.empty());
}

TEST(AddRenamePartnersTest, SelectionsWithoutARenameHalfAreLeftAlone) {
  auto all = WithARename();
  // Deliberately not in scan order: a selection the renames do not touch is not rebuilt.
  std::vector<RootChanges> selected = {{0, {Make("z"), Make("a")}}};
  AddRenamePartners(all, {{0, {{"old.txt", "new.txt"}}}}, selected);
  EXPECT_EQ(Paths(selected[0]), (std::vector<std::string>{"z", "a"}));
  AddRenamePartners(all, {}, selected);
  EXPECT_EQ(Paths(selected[0]), (std::vector<std::string>{"z", "a"}));
}

}  // namespace
}  // namespace sandboxd
