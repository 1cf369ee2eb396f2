#include "net_forwarder/forwarder.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "net_forwarder/connection_relay.h"
#include "net_forwarder/dns_message.h"
#include "network/made_up_addresses.h"
#include "network/refusal.h"
#include "unique_fd.h"

namespace sandboxd::network {
namespace {

constexpr uint32_t kAnswerTtl = 300;
/// Distinct refusals reported per job; past that the job is refusing in a loop, and the first
/// ones say why.
constexpr size_t kMaxReported = 1000;

class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void Report(const Refusal& refusal) {
    std::lock_guard lock(mutex_);
    if (reported_.size() >= kMaxReported || !reported_.insert({refusal.host, refusal.port}).second) return;
    std::string line = RefusalLine(refusal);
    // One write per line (under PIPE_BUF: atomic); a daemon that stopped reading does not
    // stall the job's connections (the pipe is non-blocking: the line is lost instead).
    if (line.size() <= kMaxRefusalLine && write(fd_, line.data(), line.size()) < 0) {}
  }

 private:
  int fd_;
  std::mutex mutex_;
  std::set<std::pair<std::string, uint16_t>> reported_;
};

struct Shared {
  const ForwarderSetup& setup;
  Reporter reporter;
  std::mutex addresses_mutex;
  MadeUpAddresses addresses;
  std::atomic<size_t> connections{0};
};

RelayContext ContextOf(Shared& shared) {
  return RelayContext{
      .rules = shared.setup.rules,
      .name_of = [&shared](const std::array<uint8_t, 4>& address) {
        std::lock_guard lock(shared.addresses_mutex);
        return shared.addresses.NameOf(address);
      },
      .report = [&shared](const Refusal& refusal) { shared.reporter.Report(refusal); },
  };
}

void AnswerLookup(Shared& shared) {
  std::array<uint8_t, 4096> packet;
  sockaddr_storage from{};
  // The address the job sent to (IP_PKTINFO): the answer must come from it, or a resolver that
  // asked 127.0.0.53 drops an answer from 127.0.0.1.
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(in_pktinfo))];
  iovec data = {packet.data(), packet.size()};
  msghdr message{};
  message.msg_name = &from;
  message.msg_namelen = sizeof from;
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t got = recvmsg(shared.setup.dns_fd, &message, MSG_DONTWAIT);
  if (got <= 0) return;
  std::optional<in_addr> sent_to;
  for (cmsghdr* entry = CMSG_FIRSTHDR(&message); entry; entry = CMSG_NXTHDR(&message, entry))
    if (entry->cmsg_level == IPPROTO_IP && entry->cmsg_type == IP_PKTINFO) {
      in_pktinfo info;
      std::memcpy(&info, CMSG_DATA(entry), sizeof info);
      sent_to = info.ipi_addr;
    }
  std::span<const uint8_t> bytes(packet.data(), static_cast<size_t>(got));
  std::optional<DnsRcode> error;
  auto query = ReadDnsQuery(bytes, &error);
  std::vector<uint8_t> answer;
  if (!query) {
    if (!error) return;
    answer = DnsError(bytes, *error);
  } else if (query->name.empty() || !AllowsName(shared.setup.rules, query->name)) {
    if (!query->name.empty()) shared.reporter.Report({query->name, 0, "not allowed"});
    answer = DnsAnswer(*query, DnsRcode::kNxDomain, std::nullopt, kAnswerTtl);
  } else if (query->klass != kDnsClassIn) {
    answer = DnsAnswer(*query, DnsRcode::kRefused, std::nullopt, kAnswerTtl);
  } else if (query->type != kDnsTypeA) {
    answer = DnsAnswer(*query, DnsRcode::kNoError, std::nullopt, kAnswerTtl);  // no data: IPv4 only
  } else {
    std::optional<std::array<uint8_t, 4>> address;
    {
      std::lock_guard lock(shared.addresses_mutex);
      address = shared.addresses.AddressOf(query->name);
    }
    if (!address) shared.reporter.Report({query->name, 0, "more than " + std::to_string(kMaxMadeUpNames) + " names looked up"});
    answer = DnsAnswer(*query, address ? DnsRcode::kNoError : DnsRcode::kServFail, address, kAnswerTtl);
  }
  iovec reply_data = {answer.data(), answer.size()};
  msghdr reply{};
  reply.msg_name = &from;
  reply.msg_namelen = message.msg_namelen;
  reply.msg_iov = &reply_data;
  reply.msg_iovlen = 1;
  alignas(cmsghdr) char reply_control[CMSG_SPACE(sizeof(in_pktinfo))] = {};
  if (sent_to) {
    reply.msg_control = reply_control;
    reply.msg_controllen = sizeof reply_control;
    cmsghdr* entry = CMSG_FIRSTHDR(&reply);
    entry->cmsg_level = IPPROTO_IP;
    entry->cmsg_type = IP_PKTINFO;
    entry->cmsg_len = CMSG_LEN(sizeof(in_pktinfo));
    in_pktinfo info{};
    info.ipi_spec_dst = *sent_to;
    std::memcpy(CMSG_DATA(entry), &info, sizeof info);
  }
  sendmsg(shared.setup.dns_fd, &reply, MSG_DONTWAIT);
}

void AcceptConnections(Shared& shared, int listener, uint16_t port) {
  for (;;) {
    UniqueFd connection(accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!connection) return;
    if (shared.connections.load() >= kMaxForwardedConnections) {
      shared.reporter.Report({"(any host)", port, "more than " + std::to_string(kMaxForwardedConnections) + " connections open at once"});
      continue;
    }
    ++shared.connections;
    std::thread([&shared, port, connection = std::move(connection)]() mutable {
      RelayConnection(std::move(connection), port, ContextOf(shared));
      --shared.connections;
    }).detach();
  }
}

/// Connections on ports no rule names, sent here by the daemon's rule: each is refused
/// (closed) and reported, with the name or address and port it was meant for.
void RefuseConnections(Shared& shared) {
  for (;;) {
    UniqueFd connection(accept4(shared.setup.refusing_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection) return;
    ReportOtherPort(connection.get(), ContextOf(shared));
  }
}

}  // namespace

int RunForwarder(const ForwarderSetup& setup) {
  int on = 1;
  if (setsockopt(setup.dns_fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on) != 0) return 1;
  // The Shared state lives as long as the process: connection threads are detached, and the
  // process ends (with them) when the job has.
  auto* shared = new Shared{setup, Reporter(setup.report_fd), {}, {}, {}};
  std::vector<pollfd> watched = {{setup.life_fd, POLLIN, 0}, {setup.dns_fd, POLLIN, 0}, {setup.refusing_fd, POLLIN, 0}};
  for (const auto& [fd, port] : setup.listeners) watched.push_back({fd, POLLIN, 0});
  for (;;) {
    if (poll(watched.data(), watched.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (watched[0].revents) {
      char byte;
      // The job has ended: so does everything here, its connections' threads mid-way included
      // (no exit handlers: nothing here outlives the process, and the shared state is theirs).
      if (read(setup.life_fd, &byte, 1) <= 0) _exit(0);
    }
    if (watched[1].revents & POLLIN) AnswerLookup(*shared);
    if (watched[2].revents & POLLIN) RefuseConnections(*shared);
    for (size_t i = 0; i < setup.listeners.size(); ++i)
      if (watched[3 + i].revents & POLLIN) AcceptConnections(*shared, setup.listeners[i].first, setup.listeners[i].second);
  }
}

}  // namespace sandboxd::network
