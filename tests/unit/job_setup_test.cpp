#include "jobs/job_setup.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/errors.h"

namespace sandboxd {
namespace {

TEST(ResolveJobCwdTest, DefaultsToFirstRoot) {
  EXPECT_EQ(ResolveJobCwd("", {"/home/u/a", "/home/u/b"}, "id"), "/home/u/a");
}

// sandboxctl run passes its own directory with "cwd_fallback": outside the roots that means the
// first root, but a malformed path is still refused.
TEST(ResolveJobCwdTest, WithFallbackAPathOutsideTheRootsIsTheFirstRoot) {
  EXPECT_EQ(ResolveJobCwd("/etc", {"/home/u/a", "/home/u/b"}, "id", true), "/home/u/a");
  EXPECT_EQ(ResolveJobCwd("/home/u/b/src", {"/home/u/a", "/home/u/b"}, "id", true), "/home/u/b/src");
  EXPECT_THROW(ResolveJobCwd("/etc", {"/home/u/a"}, "id", false), Error);
  EXPECT_THROW(ResolveJobCwd("/home/u/a/../b", {"/home/u/a"}, "id", true), Error);
}

TEST(ResolveJobCwdTest, AcceptsInsideAnyRootAndNormalisesSlashes) {
  EXPECT_EQ(ResolveJobCwd("/home/u/b//src/", {"/home/u/a", "/home/u/b"}, "id"), "/home/u/b/src");
  EXPECT_EQ(ResolveJobCwd("/home/u/a", {"/home/u/a"}, "id"), "/home/u/a");
}

TEST(ResolveJobCwdTest, RefusesOutsideDotDotAndRelative) {
  for (const char* bad : {"/home/u", "/home/u/ab", "/home/u/a/../x", "src", "/home/u/a/./x"}) {
    try {
      ResolveJobCwd(bad, {"/home/u/a"}, "id");
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidPath) << bad;
    }
  }
}

TEST(JobEnvironmentTest, MinimalSetPlusCallerOverrides) {
  UserCredentials user;
  user.name = "alice";
  user.home = "/home/alice";
  user.shell = "/bin/bash";
  auto env = JobEnvironment(user, {{"TERM", "xterm"}, {"LANG", "de_DE.UTF-8"}});
  std::vector<std::string> expected = {"HOME=/home/alice", "LANG=de_DE.UTF-8", "LOGNAME=alice",
                                       "PATH=/usr/local/bin:/usr/bin:/bin", "SHELL=/bin/bash", "TERM=xterm", "USER=alice"};
  EXPECT_EQ(env, expected);
}

TEST(JobEnvironmentTest, RefusesBadNames) {
  UserCredentials user;
  EXPECT_THROW(JobEnvironment(user, {{"", "x"}}), Error);
  EXPECT_THROW(JobEnvironment(user, {{"A=B", "x"}}), Error);
  EXPECT_THROW(JobEnvironment(user, {{std::string("A\0B", 3), "x"}}), Error);
  EXPECT_THROW(JobEnvironment(user, {{"A", std::string("x\0y", 3)}}), Error);
}

}  // namespace
}  // namespace sandboxd
