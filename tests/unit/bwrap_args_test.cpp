#include "jobs/bwrap_args.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/errors.h"

namespace sandboxd {
namespace {

TEST(BwrapArgsTest, OfflineJobHasEveryIsolationFlagInOrder) {
  BwrapConfig config;
  config.bwrap = "/usr/bin/bwrap";
  config.roots = {{"/run/sandboxd/ab/0", "/home/u/proj"}, {"/run/sandboxd/ab/1", "/tmp/lib"}};
  config.cwd = "/home/u/proj/src";
  config.json_status_fd = 3;
  config.args_fd = 4;
  config.block_fd = 5;
  config.env = {"HOME=/home/u", "X=a=b"};
  config.command = {"make", "-j2"};
  std::vector<std::string> expected = {
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/sys/class/net", "--tmpfs", "/sys/devices/virtual/net",
      "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run",
      "--bind", "/run/sandboxd/ab/0", "/home/u/proj", "--bind", "/run/sandboxd/ab/1", "/tmp/lib",
      "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
      "--die-with-parent", "--new-session", "--chdir", "/home/u/proj/src", "--json-status-fd", "3",
      "--block-fd", "5", "--clearenv", "--setenv", "HOME", "/home/u", "--setenv", "X", "a=b"};
  BwrapInvocation invocation = BuildBwrapArgs(config);
  EXPECT_EQ(invocation.options, expected);
  EXPECT_EQ(invocation.argv, (std::vector<std::string>{"/usr/bin/bwrap", "--args", "4", "--", "make", "-j2"}));
}

// The job's first program is there to run wherever the daemon lives: bound at its own path
// after the private /tmp and the hidden paths, which would otherwise cover it.
TEST(BwrapArgsTest, TheStarterIsBoundAfterWhatCouldCoverIt) {
  BwrapConfig config;
  config.hiding = {"--tmpfs", "/opt/hidden"};
  config.starter = "/tmp/build/daemon/sandboxd-job-exec";
  config.command = {config.starter, "--", "true"};
  auto options = BuildBwrapArgs(config).options;
  auto at = [&](const std::vector<std::string>& run) { return std::search(options.begin(), options.end(), run.begin(), run.end()); };
  auto starter = at({"--ro-bind", config.starter, config.starter});
  ASSERT_NE(starter, options.end());
  EXPECT_LT(at({"--tmpfs", "/tmp"}), starter);
  EXPECT_LT(at({"--tmpfs", "/opt/hidden"}), starter);
}

// What a job needs from its private /run (resolv.conf's target) and the sockets its owner
// allowed are bound after the private directories and the hidden paths, which would cover them.
TEST(BwrapArgsTest, HostFilesAndAllowedSocketsAreBoundAfterWhatCouldCoverThem) {
  BwrapConfig config;
  config.hiding = {"--ro-bind", "/empty", "/run/docker.sock"};
  config.host_files = {"/run/systemd/resolve/stub-resolv.conf"};
  config.allowed_sockets = {"/run/user/1000/ssh-agent.sock"};
  config.command = {"true"};
  auto options = BuildBwrapArgs(config).options;
  auto at = [&](const std::vector<std::string>& run) { return std::search(options.begin(), options.end(), run.begin(), run.end()); };
  auto resolv = at({"--ro-bind", config.host_files[0], config.host_files[0]});
  auto agent = at({"--ro-bind", config.allowed_sockets[0], config.allowed_sockets[0]});
  ASSERT_NE(resolv, options.end());
  ASSERT_NE(agent, options.end());
  EXPECT_LT(at({"--tmpfs", "/run"}), resolv);
  EXPECT_LT(at(config.hiding), resolv);
  EXPECT_LT(at(config.hiding), agent);
}

// Issue 41: a directory of homes is one tmpfs however many homes it holds. It comes before the
// roots' binds (a root inside it stays seen) with the owner's home and its links put back
// first; the hidden paths come on top of it; it is made read-only last, after every bind that
// may have needed a mount point in it (a root in another user's directory, an allowed socket,
// the starter).
TEST(BwrapArgsTest, ACoverIsOneTmpfsBeforeTheRootsAndReadOnlyAfterEveryBind) {
  BwrapConfig config;
  config.roots = {{"/run/sandboxd/ab/0", "/home/u/proj"}, {"/run/sandboxd/ab/1", "/home/bob/shared"}};
  config.covers = {{"/home", {{"/home/u-link", "u"}}, {"/home/u"}}, {"/srv/home", {}, {}}};
  config.hiding = {"--perms", "0000", "--tmpfs", "/home/u/.ssh", "--remount-ro", "/home/u/.ssh"};
  config.host_files = {"/run/systemd/resolve/stub-resolv.conf"};
  config.allowed_sockets = {"/home/bob/agent.sock"};
  config.starter = "/home/bob/build/sandboxd-job-exec";
  config.command = {config.starter, "--", "true"};
  std::vector<std::string> expected = {
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/sys/class/net", "--tmpfs", "/sys/devices/virtual/net",
      "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run",
      "--perms", "0755", "--tmpfs", "/home", "--symlink", "u", "/home/u-link", "--ro-bind", "/home/u", "/home/u",
      "--perms", "0755", "--tmpfs", "/srv/home",
      "--bind", "/run/sandboxd/ab/0", "/home/u/proj", "--bind", "/run/sandboxd/ab/1", "/home/bob/shared",
      "--perms", "0000", "--tmpfs", "/home/u/.ssh", "--remount-ro", "/home/u/.ssh",
      "--ro-bind", "/run/systemd/resolve/stub-resolv.conf", "/run/systemd/resolve/stub-resolv.conf",
      "--ro-bind", "/home/bob/agent.sock", "/home/bob/agent.sock",
      "--ro-bind", config.starter, config.starter,
      "--remount-ro", "/home", "--remount-ro", "/srv/home",
      "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
      "--die-with-parent", "--new-session", "--clearenv"};
  EXPECT_EQ(BuildBwrapArgs(config).options, expected);
}

// A scratch home is bound writable over the home the cover bound back read-only, before the
// roots (a root in the home is its own overlay on top) and the hiding (~/.ssh stays hidden).
TEST(BwrapArgsTest, AScratchHomeIsBoundAfterTheCoverAndBeforeTheRootsAndTheHiding) {
  BwrapConfig config;
  config.roots = {{"/run/sandboxd/ab/0", "/home/u/proj"}};
  config.covers = {{"/home", {}, {"/home/u"}}};
  config.scratch_home = {"/run/sandboxd/ab/home", "/home/u"};
  config.hiding = {"--perms", "0000", "--tmpfs", "/home/u/.ssh", "--remount-ro", "/home/u/.ssh"};
  config.command = {"true"};
  std::vector<std::string> expected = {
      "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/sys/class/net", "--tmpfs", "/sys/devices/virtual/net",
      "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run",
      "--perms", "0755", "--tmpfs", "/home", "--ro-bind", "/home/u", "/home/u",
      "--bind", "/run/sandboxd/ab/home", "/home/u",
      "--bind", "/run/sandboxd/ab/0", "/home/u/proj",
      "--perms", "0000", "--tmpfs", "/home/u/.ssh", "--remount-ro", "/home/u/.ssh",
      "--remount-ro", "/home",
      "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
      "--die-with-parent", "--new-session", "--clearenv"};
  EXPECT_EQ(BuildBwrapArgs(config).options, expected);
}

TEST(BwrapArgsTest, NoPathOrVariableOnTheCommandLine) {
  BwrapConfig config;
  config.roots = {{"/run/sandboxd/ab/0", "/home/u/secret-project"}};
  config.hiding = {"--tmpfs", "/home/u/hidden"};
  config.covers = {{"/home", {{"/home/u-hidden-link", "u"}}, {"/home/u"}}};
  config.env = {"TOKEN=hunter2"};
  config.command = {"true"};
  for (const auto& arg : BuildBwrapArgs(config).argv) {
    EXPECT_EQ(arg.find("secret-project"), std::string::npos) << arg;
    EXPECT_EQ(arg.find("hidden"), std::string::npos) << arg;
    EXPECT_EQ(arg.find("hunter2"), std::string::npos) << arg;
  }
}

TEST(BwrapArgsTest, NetworkGrantedDropsOnlyUnshareNet) {
  BwrapConfig config;
  config.roots = {{"/m", "/r"}};
  config.network = true;
  config.command = {"true"};
  auto invocation = BuildBwrapArgs(config);
  const auto& args = invocation.options;
  EXPECT_EQ(std::count(args.begin(), args.end(), "--unshare-net"), 0);
  EXPECT_EQ(std::count(args.begin(), args.end(), "/sys/class/net"), 0) << "a job with the network sees its interfaces";
  EXPECT_EQ(std::count(args.begin(), args.end(), "--unshare-pid"), 1);
  EXPECT_EQ(invocation.argv.back(), "true");
}

TEST(BwrapArgsTest, CommandArgumentsThatLookLikeOptionsStayAfterSeparator) {
  BwrapConfig config;
  config.roots = {{"/m", "/r"}};
  config.command = {"--bind", "/", "/"};
  auto argv = BuildBwrapArgs(config).argv;
  auto separator = std::find(argv.begin(), argv.end(), "--");
  ASSERT_NE(separator, argv.end());
  EXPECT_EQ(std::vector<std::string>(separator + 1, argv.end()), config.command);
}

TEST(BwrapArgsTest, ANulByteCannotSplitAnArgument) {
  BwrapConfig config;
  config.roots = {{"/m", "/r"}};
  config.command = {"true"};
  config.env = {std::string("A=x\0--bind", 10)};
  EXPECT_THROW(BuildBwrapArgs(config), Error);
  config.env = {"=nameless"};
  EXPECT_THROW(BuildBwrapArgs(config), Error);
  config.env = {};
  config.cwd = std::string("/r\0x", 4);
  EXPECT_THROW(BuildBwrapArgs(config), Error);
}

TEST(BwrapArgsTest, ArgsDataEndsEveryOptionWithNul) {
  EXPECT_EQ(BwrapArgsData({"--ro-bind", "/", "/"}), std::string("--ro-bind\0/\0/\0", 14));
}

}  // namespace
}  // namespace sandboxd
