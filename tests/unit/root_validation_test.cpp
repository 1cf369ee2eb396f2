#include "sandbox/root_validation.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"

namespace sandboxd {
namespace {

TEST(PathHoldsTest, ItselfAndWhatIsBeneathOnlyWholeComponents) {
  EXPECT_TRUE(PathHolds("/home/u", "/home/u"));
  EXPECT_TRUE(PathHolds("/home/u", "/home/u/p"));
  EXPECT_TRUE(PathHolds("/", "/etc"));
  EXPECT_FALSE(PathHolds("/home/u", "/home/user"));
  EXPECT_FALSE(PathHolds("/home/u/p", "/home/u"));
}

TEST(PathsOverlapTest, EqualNestedAndDisjoint) {
  EXPECT_TRUE(PathsOverlap("/home/u/p", "/home/u/p"));
  EXPECT_TRUE(PathsOverlap("/home/u/p", "/home/u/p/src"));
  EXPECT_TRUE(PathsOverlap("/home/u/p/src", "/home/u/p"));
  EXPECT_FALSE(PathsOverlap("/home/u/p", "/home/u/project"));
  EXPECT_FALSE(PathsOverlap("/home/u/p2", "/home/u/p"));
  EXPECT_TRUE(PathsOverlap("/", "/anything"));
}

TEST(ForbiddenReasonTest, SystemTreesAndOwnState) {
  ForbiddenAreas areas{"/var/lib/sandboxd", "/run/sandboxd"};
  EXPECT_TRUE(ForbiddenReason("/", areas));
  EXPECT_TRUE(ForbiddenReason("/proc", areas));
  EXPECT_TRUE(ForbiddenReason("/proc/self", areas));
  EXPECT_TRUE(ForbiddenReason("/sys/fs", areas));
  EXPECT_TRUE(ForbiddenReason("/dev", areas));
  EXPECT_TRUE(ForbiddenReason("/run/user/1000", areas));
  EXPECT_TRUE(ForbiddenReason("/var/lib/sandboxd/sandboxes", areas));
  EXPECT_TRUE(ForbiddenReason("/var/lib", areas));  // contains the state directory
  EXPECT_FALSE(ForbiddenReason("/home/u/proj", areas));
  EXPECT_FALSE(ForbiddenReason("/procedures", areas));
  EXPECT_FALSE(ForbiddenReason("/devel/x", areas));
}

TEST(CheckRootSyntaxTest, RefusesRelativeAndEmpty) {
  EXPECT_THROW(CheckRootSyntax(""), Error);
  EXPECT_THROW(CheckRootSyntax("proj"), Error);
  EXPECT_THROW(CheckRootSyntax("./proj"), Error);
  EXPECT_NO_THROW(CheckRootSyntax("/home/u/proj"));
  try {
    CheckRootSyntax("proj");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidPath);
    EXPECT_NE(std::string(e.what()).find("proj"), std::string::npos);
  }
}

TEST(CheckRootsDisjointTest, NestedRootsOfOneRequestOverlap) {
  EXPECT_NO_THROW(CheckRootsDisjoint({"/a/b", "/a/c"}));
  try {
    CheckRootsDisjoint({"/a/b", "/a/b/c"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kOverlap);
  }
}

class OpenRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to check as another user";
    char templ[] = "/tmp/sbx-root-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    chmod(dir_.c_str(), 0755);
    nobody_.uid = 65534;
    nobody_.gid = 65534;
    nobody_.groups = {65534};
  }
  void TearDown() override {
    if (!dir_.empty()) system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
  UserCredentials nobody_;
  ForbiddenAreas areas_{"/var/lib/sandboxd", "/run/sandboxd"};
};

TEST_F(OpenRootTest, WritableDirectoryIsCanonicalised) {
  std::string proj = dir_ + "/proj";
  mkdir(proj.c_str(), 0755);
  chown(proj.c_str(), nobody_.uid, nobody_.gid);
  symlink(proj.c_str(), (dir_ + "/link").c_str());
  OpenedRoot through_link = OpenRoot(dir_ + "/link", nobody_, areas_);
  EXPECT_EQ(through_link.canonical, proj);
  EXPECT_EQ(OpenRoot(dir_ + "/proj/", nobody_, areas_).canonical, proj);
  // The descriptor is the directory itself, and so are the identity fields.
  struct stat by_fd, by_name;
  ASSERT_EQ(fstat(through_link.fd.get(), &by_fd), 0);
  ASSERT_EQ(stat(proj.c_str(), &by_name), 0);
  EXPECT_EQ(by_fd.st_ino, by_name.st_ino);
  EXPECT_EQ(through_link.ino, by_name.st_ino);
  EXPECT_EQ(through_link.dev, by_name.st_dev);
}

TEST_F(OpenRootTest, RefusesWhatTheUserCannotWrite) {
  std::string mine = dir_ + "/root-owned";
  mkdir(mine.c_str(), 0755);
  try {
    OpenRoot(mine, nobody_, areas_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidPath);
    EXPECT_NE(std::string(e.what()).find("not a directory you can write"), std::string::npos) << e.what();
  }
}

TEST_F(OpenRootTest, RefusesMissingAndFiles) {
  try {
    OpenRoot(dir_ + "/missing", nobody_, areas_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  std::string file = dir_ + "/file";
  close(open(file.c_str(), O_CREAT | O_WRONLY, 0666));
  try {
    OpenRoot(file, nobody_, areas_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a directory"), std::string::npos) << e.what();
  }
}

// The user's lookup decides, not root's: a directory the user may write behind one the user may
// not search is out of reach.
TEST_F(OpenRootTest, IsLookedUpAsTheUser) {
  std::string locked = dir_ + "/locked";
  mkdir(locked.c_str(), 0700);
  std::string inner = locked + "/inner";
  mkdir(inner.c_str(), 0777);
  chmod(inner.c_str(), 0777);
  try {
    OpenRoot(inner, nobody_, areas_);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidPath);
    EXPECT_NE(std::string(e.what()).find("root " + inner + " is not a directory you can write"), std::string::npos) << e.what();
  }
}

// The forbidden areas are judged on the directory opened, whatever name led there.
TEST_F(OpenRootTest, ForbiddenAreasAreJudgedOnTheCanonicalPath) {
  std::string state = dir_ + "/state";
  mkdir(state.c_str(), 0777);
  chmod(state.c_str(), 0777);
  symlink(state.c_str(), (dir_ + "/innocent").c_str());
  ForbiddenAreas areas{state, "/run/sandboxd"};
  try {
    OpenRoot(dir_ + "/innocent", nobody_, areas);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidPath);
    EXPECT_NE(std::string(e.what()).find("sandboxd's state directory"), std::string::npos) << e.what();
  }
}

TEST(PathFromFdLinkTest, OnlyAbsolutePathsOfLiveDirectories) {
  EXPECT_EQ(PathFromFdLink("/home/u/p", false), "/home/u/p");
  EXPECT_EQ(PathFromFdLink("/home/u/p (deleted)", false), "/home/u/p (deleted)");  // a real name
  EXPECT_EQ(PathFromFdLink("/home/u/p (deleted)", true), std::nullopt);
  EXPECT_EQ(PathFromFdLink("pipe:[4242]", false), std::nullopt);
  EXPECT_EQ(PathFromFdLink("", false), std::nullopt);
}

TEST(DescribeOverlapTest, TheCallersOwnSandboxIsNamed) {
  EXPECT_EQ(DescribeOverlap("/home/u/p", false, {"3fa2", "/home/u/p/src", false, true}),
            "root /home/u/p overlaps root /home/u/p/src of sandbox 3fa2 (both must be created --shared to overlap)");
  EXPECT_EQ(DescribeOverlap("/home/u/p", true, {"3fa2", "/home/u/p", false, true}),
            "root /home/u/p overlaps root /home/u/p of sandbox 3fa2 (which is not shared)");
}

TEST(DescribeOverlapTest, AnotherUsersSandboxIsNotNamed) {
  std::string plain = DescribeOverlap("/srv/team", false, {"3fa2", "/srv/team/bobs", false, false});
  EXPECT_EQ(plain, "root /srv/team overlaps a sandbox of another user");
  // Asking for --shared would not help against an unshared one: no hint, nothing more said.
  EXPECT_EQ(DescribeOverlap("/srv/team", true, {"3fa2", "/srv/team/bobs", false, false}), plain);
  // Against a shared one it would: said so.
  std::string hinted = DescribeOverlap("/srv/team", false, {"3fa2", "/srv/team/bobs", true, false});
  EXPECT_EQ(hinted, "root /srv/team overlaps a sandbox of another user (it is shared: create yours --shared to overlap it)");
  EXPECT_EQ(hinted.find("3fa2"), std::string::npos);
  EXPECT_EQ(hinted.find("bobs"), std::string::npos);
}

}  // namespace
}  // namespace sandboxd
