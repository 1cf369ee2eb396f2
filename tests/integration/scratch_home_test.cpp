// create --scratch-home: an agent CLI's writes to the home (~/.cache, ~/.config, dotfiles) work
// in that sandbox's jobs and stay with the sandbox, seen by its later jobs across a restart and
// a suspend, never listed as a change, never committed, and gone with destroy; hidden paths
// stay hidden; without it the home is read-only; a home inside a root is refused.

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "harness.h"

namespace sandboxd::it {
namespace {

TEST(ScratchHomeTest, JobsWriteTheHomeIntoTheSandboxAlone) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string home = getpwnam(kAlice)->pw_dir;
  std::string project = w.MakeProject(kAlice);
  auto live_project = Snapshot(project);
  // A secret in the live home, which no job may read, scratch home or not.
  ASSERT_EQ(w.RunAs(kAlice, {"sh", "-c", "mkdir -p ~/.ssh && echo secret > ~/.ssh/id_scratch_test"}).status, 0);
  Result made = w.Sandboxctl(kAlice, {"create", "--scratch-home", project});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string id = Trim(made.out);
  const std::string cache = ".cache/scratch-test-" + id, dotfile = ".scratch-test-" + id;
  EXPECT_TRUE(Contains(w.Sandboxctl(kAlice, {"show", id}).out, "Scratch home: yes")) << w.Sandboxctl(kAlice, {"show", id}).out;
  EXPECT_TRUE(Contains(w.Sandboxctl(kAlice, {"--json=short", "show", id}).out, "\"scratch_home\":true"));

  Result wrote = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c",
                                       "mkdir -p ~/" + cache + " && echo cached > ~/" + cache + "/x && echo dot > ~/" + dotfile +
                                           " && echo made > made.txt; cat ~/.ssh/id_scratch_test"});
  EXPECT_NE(wrote.status, 0) << "a hidden path was readable:\n" << wrote.out;
  EXPECT_FALSE(Contains(wrote.out, "secret")) << wrote.out;
  auto read_back = [&] { return w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "cat ~/" + cache + "/x ~/" + dotfile}); };
  EXPECT_EQ(read_back().out, "cached\ndot\n") << read_back().err;
  // Never a change, never live.
  EXPECT_EQ(w.Sandboxctl(kAlice, {"changes", id}).out, "A made.txt\n");
  struct stat st;
  EXPECT_NE(stat((home + "/" + cache).c_str(), &st), 0) << "the scratch home reached the live home";
  EXPECT_NE(stat((home + "/" + dotfile).c_str(), &st), 0) << "the scratch home reached the live home";
  ASSERT_EQ(w.Sandboxctl(kAlice, {"commit", id, "--all"}).status, 0);
  EXPECT_NE(stat((home + "/" + dotfile).c_str(), &st), 0) << "a commit took the scratch home live";

  // Kept across a restart of the daemon, and a suspend and resume.
  w.KillDaemon();
  ASSERT_TRUE(w.StartDaemon()) << w.DaemonLog();
  EXPECT_EQ(read_back().out, "cached\ndot\n") << "after a restart: " << read_back().err;
  ASSERT_EQ(w.Sandboxctl(kAlice, {"suspend", id}).status, 0);
  ASSERT_EQ(w.Sandboxctl(kAlice, {"resume", id}).status, 0);
  EXPECT_EQ(read_back().out, "cached\ndot\n") << "after a resume: " << read_back().err;

  // Gone with the sandbox: a new one starts from the live home.
  ASSERT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);
  Result again = w.Sandboxctl(kAlice, {"create", "--scratch-home", project});
  ASSERT_EQ(again.status, 0) << again.err;
  std::string second = Trim(again.out);
  Result fresh = w.Sandboxctl(kAlice, {"run", second, "--", "sh", "-c", "cat ~/" + dotfile});
  EXPECT_NE(fresh.status, 0) << "a destroyed sandbox's scratch home outlived it: " << fresh.out;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", second}).status, 0);
  ASSERT_EQ(w.RunAs(kAlice, {"rm", "-f", home + "/.ssh/id_scratch_test"}).status, 0);
}

TEST(ScratchHomeTest, WithoutItTheHomeIsReadOnlyAndAHomeInARootIsRefused) {
  SANDBOXD_REQUIRE_WORLD();
  Harness& w = World();
  const std::string home = getpwnam(kAlice)->pw_dir;
  std::string project = w.MakeProject(kAlice);
  Result made = w.Sandboxctl(kAlice, {"create", project});
  ASSERT_EQ(made.status, 0) << made.err;
  std::string id = Trim(made.out);
  EXPECT_TRUE(Contains(w.Sandboxctl(kAlice, {"show", id}).out, "Scratch home: no"));
  Result refused = w.Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo x > ~/.scratch-test-none"});
  EXPECT_NE(refused.status, 0);
  EXPECT_TRUE(Contains(refused.out + refused.err, "Read-only file system")) << refused.out << refused.err;
  EXPECT_EQ(w.Sandboxctl(kAlice, {"destroy", id}).status, 0);

  Result holds = w.Sandboxctl(kAlice, {"create", "--scratch-home", home});
  EXPECT_EQ(holds.status, 1);
  EXPECT_TRUE(Contains(holds.err, "root " + home + " holds the home " + home)) << holds.err;
  // A quota would not bound what jobs write to the scratch home: refused, not half-kept.
  Result quota = w.Sandboxctl(kAlice, {"create", "--scratch-home", "--quota", "10M", w.MakeProject(kAlice)});
  EXPECT_EQ(quota.status, 1);
  EXPECT_TRUE(Contains(quota.err, "a scratch home is not counted in a sandbox's quota yet")) << quota.err;
}

}  // namespace
}  // namespace sandboxd::it
