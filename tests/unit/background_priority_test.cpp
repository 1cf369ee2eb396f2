// The settling's thread runs at nice 10 while it scans, and goes back to where it was after.

#include "runtime/background_priority.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <future>
#include <thread>

namespace sandboxd {
namespace {

int NiceOfThisThread() { return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid))); }

TEST(BackgroundPriorityTest, LowersThisThreadOnlyAndRestoresIt) {
  int before = NiceOfThisThread();
  ASSERT_LT(before, 10);
  // A thread that was there before (the daemon's workers and bus loop) keeps its priority.
  std::promise<void> lowered;
  std::promise<int> read;
  std::thread earlier([&] {
    lowered.get_future().wait();
    read.set_value(NiceOfThisThread());
  });
  {
    BackgroundPriority background;
    EXPECT_EQ(NiceOfThisThread(), 10);
    lowered.set_value();
    EXPECT_EQ(read.get_future().get(), before);
  }
  earlier.join();
  if (geteuid() == 0) {
    EXPECT_EQ(NiceOfThisThread(), before);  // raising it back needs CAP_SYS_NICE
  }
}

}  // namespace
}  // namespace sandboxd
