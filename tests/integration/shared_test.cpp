// Shared sandboxes: two sandboxes created --shared may overlay the same directory (any other
// overlap is refused, naming the sandbox and what to do); each finds the other's commits in the
// live tree, as conflicts where it changed the same files.

#include <gtest/gtest.h>

#include "harness.h"

namespace sandboxd::it {
namespace {

TEST(SharedTest, SharedSandboxesOverlapAndSeeEachOthersCommitsAsConflicts) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  std::string first = Trim(Ctl({"create", "--shared", "--name", "first", project}).out);
  ASSERT_FALSE(first.empty());
  // Not shared: refused, and told why.
  Result plain = Ctl({"create", project});
  EXPECT_EQ(plain.status, 1);
  EXPECT_NE(plain.err.find(first), std::string::npos) << plain.err;
  EXPECT_NE(plain.err.find("--shared"), std::string::npos) << plain.err;
  Result second_made = Ctl({"create", "--shared", "--name", "second", project + "/sub"});
  ASSERT_EQ(second_made.status, 0) << second_made.err;
  std::string second = Trim(second_made.out);
  EXPECT_NE(Ctl({"show", second}).out.find("Shared: yes"), std::string::npos);
  // A plain sandbox over a shared one's root is refused too.
  Result over_shared = Ctl({"create", project + "/sub"});
  EXPECT_EQ(over_shared.status, 1);
  EXPECT_NE(over_shared.err.find("both must be created --shared"), std::string::npos) << over_shared.err;

  ASSERT_EQ(Ctl({"run", first, "--", "sh", "-c", "echo first > sub/s.txt"}).status, 0);
  ASSERT_EQ(Ctl({"run", second, "--", "sh", "-c", "echo second > s.txt && echo mine > own.txt"}).status, 0);
  ASSERT_EQ(Ctl({"commit", first, "--all"}).status, 0);
  EXPECT_EQ(ReadWhole(project + "/sub/s.txt"), "first\n");
  // The second finds the first's commit in its live tree: a conflict on the file both changed.
  Result conflict = Ctl({"commit", second, "--all"});
  EXPECT_EQ(conflict.status, 1);
  EXPECT_NE(conflict.err.find("s.txt"), std::string::npos) << conflict.err;
  EXPECT_EQ(ReadWhole(project + "/sub/s.txt"), "first\n") << "a refused commit changed the live tree";
  ASSERT_EQ(Ctl({"commit", second, "--all", "--force"}).status, 0);
  EXPECT_EQ(ReadWhole(project + "/sub/s.txt"), "second\n");
  EXPECT_EQ(ReadWhole(project + "/sub/own.txt"), "mine\n");
  EXPECT_EQ(Ctl({"destroy", first}).status, 0);
  EXPECT_EQ(Ctl({"destroy", second}).status, 0);
}

}  // namespace
}  // namespace sandboxd::it
