#include "net_forwarder/upstream_address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include "network/made_up_addresses.h"

namespace sandboxd::network {
namespace {

IpAddress Ip(const char* text) {
  IpAddress ip;
  if (inet_pton(AF_INET, text, ip.bytes.s6_addr) == 1) {
    ip.family = AF_INET;
  } else {
    EXPECT_EQ(inet_pton(AF_INET6, text, &ip.bytes), 1) << text;
    ip.family = AF_INET6;
  }
  return ip;
}

std::string Why(const char* text, const std::vector<IpAddress>& host = {}) {
  auto why = ForbiddenUpstream(Ip(text), host);
  return why ? std::string(*why) : "";
}

TEST(UpstreamAddressTest, HostLocalAddressesAreForbidden) {
  EXPECT_EQ(Why("127.0.0.1"), "a loopback address");
  EXPECT_EQ(Why("127.8.9.10"), "a loopback address");
  EXPECT_EQ(Why("::1"), "a loopback address");
  EXPECT_EQ(Why("::ffff:127.0.0.1"), "a loopback address") << "IPv4-mapped, judged as IPv4";
  EXPECT_EQ(Why("0.0.0.0"), "an unspecified address");
  EXPECT_EQ(Why("::"), "an unspecified address");
  EXPECT_EQ(Why("169.254.169.254"), "a link-local address") << "a cloud's metadata service";
  EXPECT_EQ(Why("fe80::1"), "a link-local address");
  EXPECT_EQ(Why("224.0.0.251"), "a multicast address");
  EXPECT_EQ(Why("ff02::fb"), "a multicast address");
  EXPECT_EQ(Why("255.255.255.255"), "a reserved or broadcast address");
  EXPECT_EQ(Why("198.18.0.7"), "an address of the job's own name server");
  EXPECT_EQ(Why("::10.0.0.1"), "an IPv4-compatible address");
}

TEST(UpstreamAddressTest, TheHostsOwnAddressesAreForbidden) {
  std::vector<IpAddress> host = {Ip("10.0.2.15"), Ip("2001:db8::15")};
  EXPECT_EQ(Why("10.0.2.15", host), "an address of this host");
  EXPECT_EQ(Why("::ffff:10.0.2.15", host), "an address of this host");
  EXPECT_EQ(Why("2001:db8::15", host), "an address of this host");
  EXPECT_EQ(Why("10.0.2.16", host), "");
}

TEST(UpstreamAddressTest, PublicAndPrivateAddressesAreAllowed) {
  for (const char* address : {"93.184.216.34", "10.1.2.3", "192.168.1.1", "172.16.0.1", "198.20.0.1", "2001:db8::1", "64:ff9b::5db8:d822"})
    EXPECT_EQ(Why(address), "") << address;
}

TEST(UpstreamAddressTest, TheHostAddressesIncludeLoopback) {
  auto host = HostAddresses();
  ASSERT_TRUE(host.has_value());
  EXPECT_NE(std::find(host->begin(), host->end(), Ip("127.0.0.1")), host->end());
}

TEST(MadeUpAddressesTest, OneAddressPerNameForTheJobsLife) {
  MadeUpAddresses addresses;
  auto pypi = addresses.AddressOf("pypi.org");
  auto files = addresses.AddressOf("files.pythonhosted.org");
  ASSERT_TRUE(pypi && files);
  EXPECT_EQ(*pypi, (std::array<uint8_t, 4>{198, 18, 0, 1}));
  EXPECT_EQ(*files, (std::array<uint8_t, 4>{198, 18, 0, 2}));
  EXPECT_EQ(addresses.AddressOf("pypi.org"), pypi);
  EXPECT_EQ(addresses.NameOf(*files), "files.pythonhosted.org");
  EXPECT_FALSE(addresses.NameOf({198, 18, 0, 0}));
  EXPECT_FALSE(addresses.NameOf({198, 18, 0, 3}));
  EXPECT_FALSE(addresses.NameOf({93, 184, 216, 34}));
}

TEST(MadeUpAddressesTest, NamesPastTheLimitGetNone) {
  MadeUpAddresses addresses;
  for (size_t i = 0; i < kMaxMadeUpNames; ++i) ASSERT_TRUE(addresses.AddressOf("h" + std::to_string(i) + ".org"));
  EXPECT_FALSE(addresses.AddressOf("one-more.org"));
  EXPECT_TRUE(addresses.AddressOf("h0.org")) << "a name that has one keeps it";
  EXPECT_EQ(addresses.NameOf({198, 18, 16, 0}), "h4095.org");
}

}  // namespace
}  // namespace sandboxd::network
