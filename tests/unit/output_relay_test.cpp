// OutputRelay: one thread passes every call's spooled output on to its reader without ever
// blocking on one, gives up on a reader that takes nothing, and bounds what a spool may hold
// ahead of its reader.

#include "runtime/output_relay.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "temp_dir.h"

namespace sandboxd {
namespace {

using namespace std::chrono_literals;
using testing::ScopedTempDir;

struct Pipe {
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    read_end.reset(fds[0]);
    write_end.reset(fds[1]);
  }
  UniqueFd read_end, write_end;
};

/// Where `done` puts how a call ended: "" for a success.
struct Ending {
  std::promise<std::string> promise;
  std::future<std::string> future = promise.get_future();
  std::function<void(const Error*)> Done() {
    return [this](const Error* end) { promise.set_value(end ? std::string(end->what()) : std::string()); };
  }
};

std::string ReadAll(int fd) {
  std::string text;
  char buffer[65536];
  for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(got));
  return text;
}

TEST(OutputRelayTest, PassesOnEverythingToAReaderAndEndsTheCallOnce) {
  ScopedTempDir dir;
  OutputRelay relay(dir.path(), 5000, 64 << 20);
  Pipe pipe;
  Ending ending;
  auto out = relay.Start(1000, std::move(pipe.write_end), "the diff of sandbox t", ending.Done());
  const std::string text(3 << 20, 'x');  // far more than a pipe holds
  std::thread producer([&] {
    out->Append(text.substr(0, 1 << 20));
    out->Append(text.substr(1 << 20));
    out->Finish();
  });
  EXPECT_EQ(ReadAll(pipe.read_end.get()), text);
  producer.join();
  EXPECT_EQ(ending.future.get(), "");
  EXPECT_EQ(relay.Relaying(1000), 0u);
}

// The defect of issue 40: a reader that never reads held a worker. Here nobody waits on it: a
// second call, read, is served in full while the first stalls, and the first is given up on
// after the stall time, its fd closed.
TEST(OutputRelayTest, AReaderThatTakesNothingIsGivenUpOnWhileAnotherIsServed) {
  ScopedTempDir dir;
  OutputRelay relay(dir.path(), 500, 64 << 20);
  Pipe stalled, read;
  Ending stalled_end, read_end;
  auto first = relay.Start(1001, std::move(stalled.write_end), "the diff of sandbox a", stalled_end.Done());
  auto second = relay.Start(1002, std::move(read.write_end), "the diff of sandbox b", read_end.Done());
  const std::string text(1 << 20, 'y');
  first->Append(text);  // returns at once: the spool never waits for its reader
  first->Finish();
  second->Append(text);
  second->Finish();
  EXPECT_EQ(relay.Relaying(1001), 1u);
  EXPECT_EQ(ReadAll(read.read_end.get()), text);
  EXPECT_EQ(read_end.future.get(), "");
  ASSERT_EQ(stalled_end.future.wait_for(5s), std::future_status::ready);
  std::string why = stalled_end.future.get();
  EXPECT_NE(why.find("the reader of the diff of sandbox a took nothing"), std::string::npos) << why;
  EXPECT_NE(why.find("StalledReaderTimeout"), std::string::npos) << why;
  // Closed: the reader finds the pipe's end after what it holds.
  EXPECT_LT(ReadAll(stalled.read_end.get()).size(), text.size());
}

TEST(OutputRelayTest, ASpoolTooFarAheadOfItsReaderStopsTheProducer) {
  ScopedTempDir dir;
  OutputRelay relay(dir.path(), 60000, 1 << 20);
  Pipe pipe;
  Ending ending;
  auto out = relay.Start(1003, std::move(pipe.write_end), "the change list of sandbox c", ending.Done());
  try {
    out->Append(std::string(2 << 20, 'z'));
    FAIL() << "2 MiB went ahead of a reader that took nothing, past a limit of 1 MiB";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kQuotaExceeded);
    EXPECT_NE(std::string(e.what()).find("the change list of sandbox c is more than 1 MiB ahead of its reader"), std::string::npos)
        << e.what();
    out->Fail(e);
  }
  EXPECT_NE(ending.future.get().find("ahead of its reader"), std::string::npos);
}

TEST(OutputRelayTest, AReaderThatWentAwayEndsTheCallAndStopsTheProducer) {
  ScopedTempDir dir;
  OutputRelay relay(dir.path(), 60000, 64 << 20);
  Pipe pipe;
  Ending ending;
  signal(SIGPIPE, SIG_IGN);  // as sandboxd does (main.cpp)
  auto out = relay.Start(1004, std::move(pipe.write_end), "the diff of sandbox d", ending.Done());
  pipe.read_end.reset();
  // The relay may have seen the reader go before this first piece comes (its thread watches the
  // pipe): then this Append already stops the producer.
  try {
    out->Append("some text\n");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("went away"), std::string::npos) << e.what();
  }
  ASSERT_EQ(ending.future.wait_for(5s), std::future_status::ready);
  EXPECT_NE(ending.future.get().find("went away"), std::string::npos);
  EXPECT_THROW(out->Append("more\n"), Error);
}

}  // namespace
}  // namespace sandboxd
