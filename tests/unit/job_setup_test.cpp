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
  auto env = JobEnvironment(user, "calc", false, {{"TERM", "xterm"}, {"LANG", "de_DE.UTF-8"}});
  std::vector<std::string> expected = {"HOME=/home/alice", "LANG=de_DE.UTF-8", "LOGNAME=alice", "PATH=/usr/local/bin:/usr/bin:/bin",
                                       "SANDBOXD_SANDBOX=calc", "SHELL=/bin/bash", "TERM=xterm", "USER=alice"};
  EXPECT_EQ(env, expected);
}

// On a terminal the prompt names the sandbox unless the caller chose one; the sandbox's name
// is the daemon's to say, whatever the caller passed.
TEST(JobEnvironmentTest, OnATerminalThePromptNamesTheSandboxAndTheNameIsNotTheCallers) {
  UserCredentials user;
  auto env = JobEnvironment(user, "calc", true, {{"SANDBOXD_SANDBOX", "other"}});
  auto has = [&](const std::string& entry) { return std::find(env.begin(), env.end(), entry) != env.end(); };
  EXPECT_TRUE(has("PS1=(calc) $ "));
  EXPECT_TRUE(has("debian_chroot=calc"));
  EXPECT_TRUE(has("SANDBOXD_SANDBOX=calc"));
  EXPECT_FALSE(has("SANDBOXD_SANDBOX=other"));
  auto chosen = JobEnvironment(user, "calc", true, {{"PS1", "mine> "}});
  EXPECT_NE(std::find(chosen.begin(), chosen.end(), "PS1=mine> "), chosen.end());
}

TEST(JobEnvironmentTest, RefusesBadNames) {
  UserCredentials user;
  EXPECT_THROW(JobEnvironment(user, "calc", false, {{"", "x"}}), Error);
  EXPECT_THROW(JobEnvironment(user, "calc", false, {{"A=B", "x"}}), Error);
  EXPECT_THROW(JobEnvironment(user, "calc", false, {{std::string("A\0B", 3), "x"}}), Error);
  EXPECT_THROW(JobEnvironment(user, "calc", false, {{"A", std::string("x\0y", 3)}}), Error);
}

}  // namespace
}  // namespace sandboxd
