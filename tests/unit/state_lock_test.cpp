#include "service/state_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "base/errors.h"
#include "temp_dir.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;

// flock belongs to the open file description, so a second open in the same process contends
// just as another daemon would.
TEST(StateLockTest, ASecondHolderIsRefusedNamingTheDirectoryAndTheHoldersPid) {
  testing::ScopedTempDir dir;
  UniqueFd held = LockStateDirectory(dir.path(), 0ms);
  try {
    LockStateDirectory(dir.path(), 50ms);
    FAIL() << "a second lock was granted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kBusy);
    std::string message = e.what();
    EXPECT_NE(message.find(dir.path()), std::string::npos) << message;
    EXPECT_NE(message.find("pid " + std::to_string(getpid())), std::string::npos) << message;
  }
}

TEST(StateLockTest, TheNewcomerWaitsForALeavingHolder) {
  testing::ScopedTempDir dir;
  auto held = std::make_unique<UniqueFd>(LockStateDirectory(dir.path(), 0ms));
  std::thread leaver([&] {
    std::this_thread::sleep_for(100ms);
    held.reset();
  });
  auto start = std::chrono::steady_clock::now();
  UniqueFd next = LockStateDirectory(dir.path(), 5s);
  EXPECT_TRUE(next);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 90ms);
  leaver.join();
}

TEST(StateLockTest, ALockDiesWithItsProcess) {
  testing::ScopedTempDir dir;
  pid_t child = fork();
  if (child == 0) {
    UniqueFd held = LockStateDirectory(dir.path(), 0ms);
    _exit(0);  // no unlock: the kernel drops the lock with the process, as after a SIGKILL
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(LockStateDirectory(dir.path(), 0ms));
}

}  // namespace
}  // namespace sandboxd
