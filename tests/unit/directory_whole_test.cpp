// MakeDirectoryWhole against kills: a process making a directory over and over is SIGKILLed at
// random instants, and after each kill the directory is either absent or has its mode. (An
// overlay's upper root made bare and chmodded after, as before, could be left root-owned 0700
// by a kill between the two: the owner's jobs then could not enter their own root.)

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <random>
#include <string>

#include "base/fs_util.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

TEST(DirectoryWholeTest, AKillAtAnyInstantLeavesNoDirectoryOrAWholeOne) {
  testing::ScopedTempDir top;
  ASSERT_FALSE(top.path().empty());
  const std::string path = top / "upper";
  std::mt19937 random(std::random_device{}());
  int found_made = 0, found_absent = 0;
  for (int round = 0; round < 400; ++round) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (;;) {
        RemoveTree(path);
        MakeDirectoryWhole(path, 0755);
      }
    }
    usleep(200 + random() % 1500);
    kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
      ASSERT_EQ(errno, ENOENT);
      ++found_absent;
      continue;
    }
    ++found_made;
    ASSERT_TRUE(S_ISDIR(st.st_mode));
    ASSERT_EQ(st.st_mode & 07777, 0755u) << "round " << round << ": a kill left " << path << " made but not whole";
  }
  // Both outcomes seen: the kills fell inside the making, not only around it.
  EXPECT_GT(found_made, 0);
  EXPECT_GT(found_absent, 0);
  // The next making after a kill finds what the kill left beside it, and is whole.
  RemoveTree(path);
  MakeDirectoryWhole(path, 0750);
  struct stat st;
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_NE(lstat((path + ".new").c_str(), &st), 0);
}

}  // namespace
}  // namespace sandboxd
