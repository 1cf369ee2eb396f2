#include "jobs/bus_sockets.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

TEST(BusSocketsTest, FindsEveryUnixPathOfAnAddress) {
  EXPECT_EQ(UnixSocketPaths("unix:path=/run/dbus/system_bus_socket"), std::vector<std::string>{"/run/dbus/system_bus_socket"});
  EXPECT_EQ(UnixSocketPaths("unix:abstract=/tmp/x,guid=1;unix:guid=2,path=/a%20b/s;tcp:host=h,port=1"),
            std::vector<std::string>{"/a b/s"});
  EXPECT_TRUE(UnixSocketPaths("").empty());
  EXPECT_TRUE(UnixSocketPaths("unix:path=").empty());
}

}  // namespace
}  // namespace sandboxd
