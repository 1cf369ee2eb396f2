// CloseInBackground: the descriptor is closed, on another thread, and a flush waits for it.

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/background_close.h"

namespace sandboxd {
namespace {

TEST(BackgroundCloseTest, TheDescriptorIsClosedByTheFlush) {
  for (int round = 0; round < 50; ++round) {
    int ends[2];
    ASSERT_EQ(pipe2(ends, O_CLOEXEC), 0);
    UniqueFd read_end(ends[0]);
    CloseInBackground(UniqueFd(ends[1]));
    FlushBackgroundCloses();
    // The write end's only copy is gone: the read end sees the end of the pipe at once.
    pollfd fd{read_end.get(), POLLIN, 0};
    ASSERT_EQ(poll(&fd, 1, 0), 1) << "round " << round;
    char byte;
    EXPECT_EQ(read(read_end.get(), &byte, 1), 0) << "round " << round;
  }
}

TEST(BackgroundCloseTest, NothingToCloseIsNoWork) {
  CloseInBackground(UniqueFd());
  FlushBackgroundCloses();
}

}  // namespace
}  // namespace sandboxd
