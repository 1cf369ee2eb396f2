#include "jobs/host_sockets.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

// /proc/net/unix: a header, then "Num RefCount Protocol Flags Type St Inode Path" per socket;
// unnamed sockets have no path, abstract ones start with '@'.
TEST(HostSocketsTest, BoundSocketPathsAreThePathsOfSocketsBoundByAPath) {
  const std::string text =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 21 /run/dbus/system_bus_socket\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 22\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 23 @/tmp/.X11-unix/X0\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 24 /home/alice/with space.sock\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 25 /run/dbus/system_bus_socket\n"
      "0000000000000000: 00000002 00000000 00000000 0002 01 26 /run/systemd/journal/socket\n";
  EXPECT_EQ(BoundSocketPaths(text), (std::vector<std::string>{"/home/alice/with space.sock", "/run/dbus/system_bus_socket",
                                                              "/run/systemd/journal/socket"}));
  EXPECT_EQ(BoundSocketPaths(""), std::vector<std::string>{});
  EXPECT_EQ(BoundSocketPaths("garbage\n0: 1 2 3 4 5\n"), std::vector<std::string>{});
}

// A path may hold a newline: what follows it reads as another line, which may name any path.
// That is why every path is looked up and kept only when it is a socket the owner can reach
// (hidden_paths_test.cpp): here it only shows that such a line is parsed, not trusted.
TEST(HostSocketsTest, APathWithANewlineSplitsIntoLinesThatAreLookedUpNotTrusted) {
  const std::string text =
      "0000000000000000: 00000002 00000000 00010000 0001 01 21 /tmp/x\n"
      "0: 00000002 00000000 00010000 0001 01 21 /usr/bin/python3\n";
  EXPECT_EQ(BoundSocketPaths(text), (std::vector<std::string>{"/tmp/x", "/usr/bin/python3"}));
}

TEST(HostSocketsTest, AnAllowedSocketMustBeAbsoluteWithoutDotDot) {
  EXPECT_EQ(AllowedSocketSyntaxError("/run/user/1000/agent.sock"), "");
  EXPECT_NE(AllowedSocketSyntaxError("agent.sock"), "");
  EXPECT_NE(AllowedSocketSyntaxError("/run/../etc/passwd"), "");
  EXPECT_NE(AllowedSocketSyntaxError(std::string("/run/a\0b", 8)), "");
}

}  // namespace
}  // namespace sandboxd
