#include "change_selection.h"

#include <gtest/gtest.h>

#include "errors.h"
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
  auto by_dir = SelectChanges(all, {"b/"}, {""}, "id");
  ASSERT_EQ(by_dir[0].changes.size(), 2u);
  EXPECT_EQ(by_dir[0].changes[0].path, "b/c");
  auto by_hunk = SelectChanges(all, {"a:2"}, {""}, "id");
  ASSERT_EQ(by_hunk[0].changes.size(), 1u);
  EXPECT_EQ(by_hunk[0].changes[0].path, "a");
}

TEST(SelectChangesTest, MultiRootPrefixes) {
  std::vector<RootChanges> all = {{0, {Make("x")}}, {1, {Make("x")}}};
  auto selected = SelectChanges(all, {"1/x"}, {"0/", "1/"}, "id");
  EXPECT_TRUE(selected[0].changes.empty());
  EXPECT_EQ(selected[1].changes.size(), 1u);
}

TEST(SelectChangesTest, UnknownSelectorIsNamedInTheError) {
  std::vector<RootChanges> all = {{0, {Make("a")}}};
  try {
    SelectChanges(all, {"nope.txt"}, {""}, "3fa2");
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
}

TEST(DisplayPathTest, RootItself) {
  EXPECT_EQ(DisplayPath(Make("."), ""), ".");
  EXPECT_EQ(DisplayPath(Make("."), "1/"), "1");
  EXPECT_EQ(DisplayPath(Make("a/b"), "1/"), "1/a/b");
}

}  // namespace
}  // namespace sandboxd
