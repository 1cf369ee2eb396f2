// The bus going away under sandboxd (a system shutting down, dbus-daemon restarted) ends the
// daemon cleanly, never with an abort. Once a commit had asked polkit, the daemon's polkit
// connection ran its loop on a thread sdbus-c++ started, which let the disconnection out as an
// uncaught exception: std::terminate, SIGABRT, a core dump on every shutdown.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "harness.h"

namespace sandboxd::it {
namespace {

TEST(BusLossTest, ADaemonThatAskedPolkitEndsCleanlyWhenTheBusGoesAway) {
  SANDBOXD_REQUIRE_WORLD();
  World().EnsureDaemon();
  std::string project = World().MakeProject(kAlice);
  Result created = World().Sandboxctl(kAlice, {"create", project});
  ASSERT_EQ(created.status, 0) << created.err;
  std::string id = Trim(created.out);
  ASSERT_EQ(World().Sandboxctl(kAlice, {"run", id, "--", "sh", "-c", "echo more >> a.txt"}).status, 0);
  Result committed = World().Sandboxctl(kAlice, {"commit", "--all", id});  // (polkit is asked)
  ASSERT_EQ(committed.status, 0) << committed.err;

  int status = World().RestartBusUnderDaemon();
  ASSERT_NE(status, -1) << "sandboxd did not end when its bus went away";
  EXPECT_FALSE(WIFSIGNALED(status)) << "sandboxd died by signal " << WTERMSIG(status) << " when its bus went away; its log:\n"
                                    << World().DaemonLog();
  // The world is back, and the sandbox with it.
  Result destroyed = World().Sandboxctl(kAlice, {"destroy", id});
  EXPECT_EQ(destroyed.status, 0) << destroyed.err;
}

}  // namespace
}  // namespace sandboxd::it
