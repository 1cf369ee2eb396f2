// The port rule of a job allowed some hosts (jobs/other_ports_redirect.h): its text, its
// refusing port, and, as root, what it does in a network namespace of its own.

#include "jobs/other_ports_redirect.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "jobs/allowlist_namespace.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

TEST(OtherPortsRedirectTest, SendsEveryOtherPortButLoopbacksToTheRefusingPort) {
  std::string rules = OtherPortsRuleset({443, 80}, 1);
  EXPECT_NE(rules.find("ip daddr != 127.0.0.0/8 tcp dport != { 443, 80 } redirect to :1"), std::string::npos) << rules;
  EXPECT_NE(rules.find("type nat hook output"), std::string::npos) << rules;
  EXPECT_NE(rules.find("tcp dport { 443, 80 } notrack"), std::string::npos) << rules;
}

TEST(OtherPortsRedirectTest, TheRefusingPortIsPrivilegedAndNoRulesOwn) {
  EXPECT_EQ(RefusingPortFor({443, 80}), 1);
  EXPECT_EQ(RefusingPortFor({1, 2, 443}), 3);
  std::vector<uint16_t> many;
  for (uint16_t port = 1; port <= 256; ++port) many.push_back(port);
  EXPECT_EQ(RefusingPortFor(many), 257) << "256 rules at most: still below 1024";
}

/// What a connection from inside a fresh namespace, set up as a job's is, to `address`:`port`
/// turns into: "refusing ADDRESS:PORT" (the refusing socket's, with where it was meant to go),
/// "allowed" (the allowed port's listener), "own" (a listener of the namespace's own on its
/// loopback), or "error: ...", and then " (N tracked)": the namespace's conntrack entries.
std::string WhereAConnectionLands(const char* address, uint16_t port) {
  std::string landed;
  std::thread([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      landed = "error: unshare";
      return;
    }
    UniqueFd netns(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    AllowlistSockets sockets;
    try {
      sockets = PrepareAllowlistNamespace(netns.get(), {443});
    } catch (const std::exception& error) {
      landed = std::string("error: ") + error.what();
      return;
    }
    // bwrap brings lo up in a job's namespace; here the test does (an ioctl on any socket).
    UniqueFd any(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq lo{};
    std::strcpy(lo.ifr_name, "lo");
    ioctl(any.get(), SIOCGIFFLAGS, &lo);
    lo.ifr_flags |= IFF_UP;
    ioctl(any.get(), SIOCSIFFLAGS, &lo);
    UniqueFd own(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in own_address{};
    own_address.sin_family = AF_INET;
    own_address.sin_port = htons(18000);
    inet_pton(AF_INET, "127.0.0.1", &own_address.sin_addr);
    bind(own.get(), reinterpret_cast<sockaddr*>(&own_address), sizeof own_address);
    listen(own.get(), 4);

    UniqueFd client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    inet_pton(AF_INET, address, &to.sin_addr);
    if (connect(client.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      landed = std::string("error: ") + strerror(errno);
      return;
    }
    pollfd ready[3] = {{sockets.refusing.get(), POLLIN, 0}, {sockets.listeners.at(0).first.get(), POLLIN, 0}, {own.get(), POLLIN, 0}};
    poll(ready, 3, 5000);
    if (ready[0].revents) {
      UniqueFd accepted(accept4(sockets.refusing.get(), nullptr, nullptr, SOCK_CLOEXEC));
      sockaddr_in meant{};
      socklen_t length = sizeof meant;
      getsockopt(accepted.get(), SOL_IP, SO_ORIGINAL_DST, &meant, &length);
      char text[INET_ADDRSTRLEN] = "";
      inet_ntop(AF_INET, &meant.sin_addr, text, sizeof text);
      landed = "refusing " + std::string(text) + ":" + std::to_string(ntohs(meant.sin_port));
    } else if (ready[1].revents) {
      landed = "allowed";
    } else if (ready[2].revents) {
      landed = "own";
    } else {
      landed = "nowhere";
    }
    // Read from this thread, in the namespace: /proc/sys/net is the reader's namespace's.
    std::string tracked;
    std::ifstream("/proc/sys/net/netfilter/nf_conntrack_count") >> tracked;
    landed += " (" + tracked + " tracked)";
  }).join();
  return landed;
}

TEST(OtherPortsRedirectTest, InANamespaceConnectionsOnOtherPortsReachTheRefusingSocket) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a network namespace and netfilter)";
  EXPECT_EQ(WhereAConnectionLands("198.18.0.5", 22), "refusing 198.18.0.5:22 (1 tracked)");
  EXPECT_EQ(WhereAConnectionLands("10.1.2.3", 8080), "refusing 10.1.2.3:8080 (1 tracked)");
  // Only what the rule redirects is tracked: a download through the forwarder, or a job's own
  // loopback server, costs no conntrack entry.
  EXPECT_EQ(WhereAConnectionLands("198.18.0.5", 443), "allowed (0 tracked)");
  EXPECT_EQ(WhereAConnectionLands("127.0.0.1", 18000), "own (0 tracked)") << "a loopback server of the job's own";
}

}  // namespace
}  // namespace sandboxd
