// One sandbox over several directories (a project and the library it builds against): each root
// its own overlay bound at its real path in jobs; changes, diffs, selectors and commits carry the
// root's index ("0/", "1/"); a partial commit lands in one root only, a whole one in both; the
// roots of one sandbox may not nest; and a suspend keeps the changes of every root.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "harness.h"

namespace sandboxd::it {
namespace {

TEST(MultiRootTest, ChangesCarryTheRootIndexAndCommitsLandInEachRoot) {
  SANDBOXD_REQUIRE_WORLD();
  std::string app = World().MakeProject(kAlice), lib = World().MakeProject(kAlice);
  Result created = Ctl({"create", app, lib});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  // Both are bound at their real paths: one job writes in both.
  Result job = Ctl({"run", id, "--", "sh", "-c",
                    "echo app >> " + app + "/a.txt && echo lib > " + lib + "/new.txt && rm " + lib + "/b.txt"});
  ASSERT_EQ(job.status, 0) << job.err;
  EXPECT_EQ(Ctl({"changes", id}).out, "M 0/a.txt\nD 1/b.txt\nA 1/new.txt\n");
  std::string diff = Ctl({"diff", id, "1/new.txt"}).out;
  EXPECT_NE(diff.find("diff --git a/1/new.txt b/1/new.txt"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("0/a.txt"), std::string::npos) << "a selector of root 1 showed root 0: " << diff;
  // A selector without its root's prefix names nothing in a sandbox of several roots.
  Result unprefixed = Ctl({"approve", id, "new.txt"});
  EXPECT_EQ(unprefixed.status, 1);
  EXPECT_NE(unprefixed.err.find("new.txt"), std::string::npos) << unprefixed.err;

  // Root 1 only: the library changes, the app does not.
  ASSERT_EQ(Ctl({"approve", id, "1/new.txt", "1/b.txt"}).status, 0);
  Result partial = Ctl({"commit", id});
  ASSERT_EQ(partial.status, 0) << partial.err;
  EXPECT_EQ(ReadWhole(lib + "/new.txt"), "lib\n");
  EXPECT_FALSE(Exists(lib + "/b.txt"));
  EXPECT_EQ(ReadWhole(app + "/a.txt").find("app\n"), std::string::npos) << "root 0 changed in a commit of root 1";
  EXPECT_EQ(Ctl({"changes", id}).out, "M 0/a.txt\n");

  // A suspend keeps what is left in every root.
  ASSERT_EQ(Ctl({"suspend", id}).status, 0);
  ASSERT_EQ(Ctl({"resume", id}).status, 0);
  EXPECT_EQ(Ctl({"changes", id}).out, "M 0/a.txt\n");
  ASSERT_EQ(Ctl({"commit", id, "--all"}).status, 0);
  EXPECT_NE(ReadWhole(app + "/a.txt").find("app\n"), std::string::npos);
  EXPECT_EQ(Ctl({"changes", id}).out, "");
  EXPECT_EQ(Ctl({"destroy", id}).status, 0);
}

TEST(MultiRootTest, RootsOfOneSandboxMayNotNestOrRepeat) {
  SANDBOXD_REQUIRE_WORLD();
  std::string project = World().MakeProject(kAlice);
  for (const auto& roots : std::vector<std::vector<std::string>>{{project, project + "/sub"}, {project, project}}) {
    std::vector<std::string> args = {"create"};
    args.insert(args.end(), roots.begin(), roots.end());
    Result refused = Ctl(args);
    EXPECT_EQ(refused.status, 1) << roots.back();
    EXPECT_NE(refused.err.find(project), std::string::npos) << refused.err;
  }
  EXPECT_EQ(Ctl({"list"}).out.find(project), std::string::npos) << "a refused create left a sandbox";
}

}  // namespace
}  // namespace sandboxd::it
