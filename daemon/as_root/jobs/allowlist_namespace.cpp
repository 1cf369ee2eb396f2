#include "jobs/allowlist_namespace.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "base/errors.h"
#include "jobs/other_ports_redirect.h"
#include "network/made_up_addresses.h"

namespace sandboxd {
namespace {

/// The listen backlog of each allowed port: a job's burst of parallel downloads.
constexpr int kListenBacklog = 128;

/// Asks the kernel, over rtnetlink, to add what `message` (an rtmsg or ifaddrmsg) describes with
/// one 32-bit attribute, and waits for its acknowledgement; `what` names it in an error.
template <typename Message>
void AskToAdd(int netlink, uint16_t type, const Message& message, uint16_t attribute, uint32_t value, const std::string& what) {
  struct {
    nlmsghdr header;
    Message message;
    rtattr attribute;
    uint32_t value;
  } request{};
  request.header.nlmsg_len = sizeof request;
  request.header.nlmsg_type = type;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
  request.message = message;
  request.attribute.rta_type = attribute;
  request.attribute.rta_len = RTA_LENGTH(sizeof request.value);
  request.value = value;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(netlink, &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    ThrowErrno("cannot ask for " + what);
  alignas(nlmsghdr) char reply[4096];
  ssize_t got = recv(netlink, reply, sizeof reply, 0);
  if (got < static_cast<ssize_t>(NLMSG_LENGTH(sizeof(nlmsgerr)))) ThrowErrno("no answer about " + what);
  auto* header = reinterpret_cast<nlmsghdr*>(reply);
  if (header->nlmsg_type != NLMSG_ERROR) throw Error(Code::kFailed, "an unexpected answer about " + what);
  int error = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(header))->error;
  if (error != 0) ThrowErrno(error, "cannot add " + what);
}

/// Adds `local 0.0.0.0/0 dev lo table local` in the calling thread's network namespace.
/// bwrap brings lo up and gives it 127.0.0.1 in the job's own process, maybe after this: a
/// route of host scope needs neither (the kernel checks no link state for one).
void MakeEveryIpv4AddressLocal(int netlink, unsigned loopback) {
  rtmsg route{};
  route.rtm_family = AF_INET;
  route.rtm_dst_len = 0;
  route.rtm_table = RT_TABLE_LOCAL;
  route.rtm_protocol = RTPROT_STATIC;
  route.rtm_scope = RT_SCOPE_HOST;
  route.rtm_type = RTN_LOCAL;
  AskToAdd(netlink, RTM_NEWROUTE, route, RTA_OIF, loopback, "the job's route (local 0.0.0.0/0 dev lo)");
}

/// Gives lo an IPv4 address besides 127.0.0.1 (the first of the made-up range, which names no
/// host): glibc answers a lookup for IPv4 with AI_ADDRCONFIG (getent ahostsv4, Node's
/// dns.lookup with family 4) only where the host has one, and 127.0.0.1 does not count.
void GiveAnIpv4AddressForLookups(int netlink, unsigned loopback) {
  ifaddrmsg address{};
  address.ifa_family = AF_INET;
  address.ifa_prefixlen = 32;
  address.ifa_scope = RT_SCOPE_HOST;
  address.ifa_index = loopback;
  AskToAdd(netlink, RTM_NEWADDR, address, IFA_LOCAL, htonl(network::kMadeUpNetwork), "the job's own IPv4 address");
}

UniqueFd BoundSocket(int type, uint16_t port) {
  UniqueFd fd(socket(AF_INET, type | SOCK_CLOEXEC, 0));
  if (!fd) ThrowErrno("cannot open a socket in the job's network namespace");
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_port = htons(port);
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&any), sizeof any) != 0)
    ThrowErrno("cannot bind port " + std::to_string(port) + " in the job's network namespace");
  if (type == SOCK_STREAM && listen(fd.get(), kListenBacklog) != 0)
    ThrowErrno("cannot listen on port " + std::to_string(port) + " in the job's network namespace");
  return fd;
}

}  // namespace

UniqueFd OpenJobNetworkNamespace(pid_t pid, int pidfd) {
  UniqueFd netns(open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
  if (!netns) ThrowErrno("cannot open the network namespace of the job's first process");
  // Still the process the pidfd holds: the pid was not reused between the check and the open.
  if (syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) != 0) ThrowErrno("the job's first process ended while it was set up");
  struct stat job{}, own{};
  if (fstat(netns.get(), &job) != 0 || stat("/proc/self/ns/net", &own) != 0) ThrowErrno("cannot tell the job's network namespace");
  if (job.st_dev == own.st_dev && job.st_ino == own.st_ino)
    throw Error(Code::kFailed, "the job shares the host's network namespace; its hosts cannot be enforced");
  return netns;
}

AllowlistSockets PrepareAllowlistNamespace(int netns, const std::vector<uint16_t>& ports) {
  AllowlistSockets sockets;
  std::exception_ptr failure;
  // A thread of its own: setns moves only the calling thread, and this one ends in the job's
  // namespace rather than moving back.
  std::thread([&] {
    try {
      if (setns(netns, CLONE_NEWNET) != 0) ThrowErrno("cannot enter the job's network namespace");
      unsigned loopback = if_nametoindex("lo");
      if (loopback == 0) ThrowErrno("cannot find the loopback interface in the job's network namespace");
      UniqueFd netlink(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
      if (!netlink) ThrowErrno("cannot open a route socket in the job's network namespace");
      MakeEveryIpv4AddressLocal(netlink.get(), loopback);
      GiveAnIpv4AddressForLookups(netlink.get(), loopback);
      sockets.dns = BoundSocket(SOCK_DGRAM, 53);
      for (uint16_t port : ports) sockets.listeners.emplace_back(BoundSocket(SOCK_STREAM, port), port);
      const uint16_t refusing_port = RefusingPortFor(ports);
      sockets.refusing = BoundSocket(SOCK_STREAM, refusing_port);
      RedirectOtherPorts(ports, refusing_port);
    } catch (...) {
      failure = std::current_exception();
    }
  }).join();
  if (failure) std::rethrow_exception(failure);
  return sockets;
}

}  // namespace sandboxd
