#include "bwrap_args.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

TEST(BwrapArgsTest, OfflineJobHasEveryIsolationFlagInOrder) {
  BwrapConfig config;
  config.bwrap = "/usr/bin/bwrap";
  config.roots = {{"/run/sandboxd/ab/0", "/home/u/proj"}, {"/run/sandboxd/ab/1", "/tmp/lib"}};
  config.cwd = "/home/u/proj/src";
  config.json_status_fd = 3;
  config.command = {"make", "-j2"};
  std::vector<std::string> expected = {
      "/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
      "--bind", "/run/sandboxd/ab/0", "/home/u/proj", "--bind", "/run/sandboxd/ab/1", "/tmp/lib",
      "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
      "--die-with-parent", "--new-session", "--chdir", "/home/u/proj/src", "--json-status-fd", "3",
      "--", "make", "-j2"};
  EXPECT_EQ(BuildBwrapArgs(config), expected);
}

TEST(BwrapArgsTest, NetworkGrantedDropsOnlyUnshareNet) {
  BwrapConfig config;
  config.roots = {{"/m", "/r"}};
  config.network = true;
  config.command = {"true"};
  auto args = BuildBwrapArgs(config);
  EXPECT_EQ(std::count(args.begin(), args.end(), "--unshare-net"), 0);
  EXPECT_EQ(std::count(args.begin(), args.end(), "--unshare-pid"), 1);
  EXPECT_EQ(args.back(), "true");
}

TEST(BwrapArgsTest, CommandArgumentsThatLookLikeOptionsStayAfterSeparator) {
  BwrapConfig config;
  config.roots = {{"/m", "/r"}};
  config.command = {"--bind", "/", "/"};
  auto args = BuildBwrapArgs(config);
  auto separator = std::find(args.begin(), args.end(), "--");
  ASSERT_NE(separator, args.end());
  EXPECT_EQ(std::vector<std::string>(separator + 1, args.end()), config.command);
}

}  // namespace
}  // namespace sandboxd
