#include "jobs/no_route_count.h"

#include <gtest/gtest.h>

namespace sandboxd {
namespace {

TEST(NoRouteCountTest, SumsIpv4AndIpv6OutNoRoutes) {
  const char snmp[] =
      "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests "
      "OutDiscards OutNoRoutes ReasmTimeout\n"
      "Ip: 2 64 85773 0 0 0 0 0 85773 36692 0 3 0\n"
      "Icmp: InMsgs OutNoRoutes\n"
      "Icmp: 2 99\n";
  const char snmp6[] = "Ip6InReceives                   \t4\nIp6OutNoRoutes                  \t2\nIp6OutRequests 7\n";
  EXPECT_EQ(NoRouteCountOf(snmp, snmp6), 5u) << "OutNoRoutes of Ip (3) and Ip6 (2), not Icmp's";
  EXPECT_EQ(NoRouteCountOf("", ""), 0u);
  EXPECT_EQ(NoRouteCountOf("Ip: OutNoRoutes\n", "garbage"), 0u);
}

}  // namespace
}  // namespace sandboxd
