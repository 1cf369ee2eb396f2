#include "net_forwarder/connection_relay.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "net_forwarder/client_hello.h"
#include "net_forwarder/upstream_address.h"
#include "quote_path.h"

namespace sandboxd::network {
namespace {

constexpr int kConnectTimeoutMs = 15000;
constexpr size_t kBufferSize = 64 * 1024;

std::string Lower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

/// A connected socket to `name`:`port`, or an invalid one (having reported why, when the
/// reason is a refusal rather than the host being unreachable).
UniqueFd ConnectUpstream(const std::string& name, uint16_t port, const RelayContext& context) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  int resolved = getaddrinfo(name.c_str(), std::to_string(port).c_str(), &hints, &results);
  if (resolved != 0) {
    context.report({name, port, std::string("has no address on this host (") + gai_strerror(resolved) + ")"});
    return {};
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(results, freeaddrinfo);
  auto host_addresses = HostAddresses();
  if (!host_addresses) {
    context.report({name, port, "not forwarded: this host's own addresses could not be listed"});
    return {};
  }
  std::optional<std::string_view> forbidden;
  for (addrinfo* entry = results; entry; entry = entry->ai_next) {
    auto address = IpAddressOf(entry->ai_addr);
    if (!address) continue;
    if (auto why = ForbiddenUpstream(*address, *host_addresses)) {
      forbidden = why;
      continue;
    }
    UniqueFd upstream(socket(entry->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!upstream) continue;
    if (connect(upstream.get(), entry->ai_addr, entry->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
    pollfd wait = {upstream.get(), POLLOUT, 0};
    int error = 0;
    socklen_t length = sizeof error;
    if (poll(&wait, 1, kConnectTimeoutMs) != 1 || getsockopt(upstream.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0)
      continue;
    return upstream;
  }
  // Every address the name has here is one of the host's own: a name that moved onto the host
  // (DNS rebinding) reaches none of its services.
  if (forbidden) context.report({name, port, "resolves to " + std::string(*forbidden) + ", which no job is let reach"});
  return {};
}

/// Writes all of `data`, waiting while the socket is full; false when the peer is gone.
bool WriteAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t wrote = send(fd, data, size, MSG_NOSIGNAL);
    if (wrote > 0) {
      data += wrote;
      size -= static_cast<size_t>(wrote);
    } else if (wrote < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd wait = {fd, POLLOUT, 0};
      if (poll(&wait, 1, -1) < 0 && errno != EINTR) return false;
    } else {
      return false;
    }
  }
  return true;
}

/// The server name check: the job's first bytes until they are known not to be TLS, or a whole
/// ClientHello whose server name (if it names one) is `name`. Returns the bytes to pass on, or
/// nullopt when the connection is refused (reported) or the job closed it first.
enum class Verdict { kPass, kRefuse, kWait };

Verdict Judge(const std::vector<uint8_t>& first, const std::string& name, uint16_t port, const RelayContext& context) {
  auto hello = ReadClientHello(first);
  switch (hello.state) {
    case ClientHello::State::kNeedMore: return Verdict::kWait;
    case ClientHello::State::kNotTls: return Verdict::kPass;
    case ClientHello::State::kMalformed:
      context.report({name, port, "sent a TLS ClientHello that could not be read"});
      return Verdict::kRefuse;
    case ClientHello::State::kRead:
      if (!hello.server_name || Lower(*hello.server_name) == name) return Verdict::kPass;
      // The same address may serve many names (a CDN): the name asked of it must be the one
      // that was allowed.
      context.report({name, port, "asked it for TLS server name " + api::QuotePath(hello.server_name->substr(0, 253))});
      return Verdict::kRefuse;
  }
  return Verdict::kRefuse;
}

/// One way of a connection once judged: bytes moved by the kernel from socket to pipe to
/// socket (splice), never copied through the forwarder, so that a download through it runs
/// near the speed of a direct one.
class SplicedWay {
 public:
  SplicedWay(int from, int to, bool from_open) : from_(from), to_(to), from_open_(from_open) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) {
      failed_ = true;
      return;
    }
    read_end_.reset(ends[0]);
    write_end_.reset(ends[1]);
    fcntl(write_end_.get(), F_SETPIPE_SZ, kPipeSize);
    if (!from_open_) Finish();
  }
  bool done() const { return done_ || failed_; }
  bool failed() const { return failed_; }
  short WantFrom() const { return !done() && from_open_ && buffered_ < kPipeSize ? POLLIN : 0; }
  short WantTo() const { return !done() && buffered_ > 0 ? POLLOUT : 0; }
  void Take() {
    ssize_t got = splice(from_, nullptr, write_end_.get(), nullptr, kPipeSize, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (got > 0) {
      buffered_ += static_cast<size_t>(got);
    } else if (got == 0) {
      from_open_ = false;
      if (buffered_ == 0) Finish();
    } else if (errno != EAGAIN && errno != EINTR) {
      failed_ = true;
    }
  }
  void Give() {
    ssize_t put = splice(read_end_.get(), nullptr, to_, nullptr, buffered_, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (put > 0) {
      buffered_ -= static_cast<size_t>(put);
      if (buffered_ == 0 && !from_open_) Finish();
    } else if (put < 0 && errno != EAGAIN && errno != EINTR) {
      failed_ = true;
    }
  }

 private:
  static constexpr size_t kPipeSize = 1 << 20;
  void Finish() {
    shutdown(to_, SHUT_WR);
    done_ = true;
  }
  int from_, to_;
  bool from_open_;
  UniqueFd read_end_, write_end_;
  size_t buffered_ = 0;
  bool done_ = false, failed_ = false;
};

void SpliceBothWays(int job, int upstream, bool job_open, bool upstream_open) {
  SplicedWay out(job, upstream, job_open), in(upstream, job, upstream_open);
  while (!(out.done() && in.done())) {
    if (out.failed() || in.failed()) return;
    pollfd watched[2] = {{job, static_cast<short>(out.WantFrom() | in.WantTo()), 0},
                         {upstream, static_cast<short>(in.WantFrom() | out.WantTo()), 0}};
    if (poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    // (Each way is tried on any event: an error or hang-up shows up as its splice's answer.)
    if (watched[0].revents) {
      if (out.WantFrom()) out.Take();
      if (in.WantTo()) in.Give();
    }
    if (watched[1].revents) {
      if (in.WantFrom()) in.Take();
      if (out.WantTo()) out.Give();
    }
  }
}

void Relay(int job, int upstream, const std::string& name, uint16_t port, const RelayContext& context) {
  // Until the job's first bytes are judged, they are read here (and what the server says
  // first, as an SSH server does, is passed on); then the kernel moves the rest.
  std::vector<uint8_t> buffer(kBufferSize);
  std::vector<uint8_t> first;
  bool job_open = true, upstream_open = true;
  for (;;) {
    pollfd watched[2] = {{job, POLLIN, 0}, {upstream, static_cast<short>(upstream_open ? POLLIN : 0), 0}};
    if (poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (watched[0].revents) {
      ssize_t got = recv(job, buffer.data(), buffer.size(), 0);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) return;  // closed before it could be judged: nothing of it is passed on
      first.insert(first.end(), buffer.begin(), buffer.begin() + got);
      Verdict verdict = Judge(first, name, port, context);
      if (verdict == Verdict::kRefuse) return;
      if (verdict == Verdict::kPass) {
        if (!WriteAll(upstream, first.data(), first.size())) return;
        break;
      }
    }
    if (upstream_open && watched[1].revents) {
      ssize_t got = recv(upstream, buffer.data(), buffer.size(), 0);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) {
        upstream_open = false;
        shutdown(job, SHUT_WR);
      } else if (!WriteAll(job, buffer.data(), static_cast<size_t>(got))) {
        return;
      }
    }
  }
  SpliceBothWays(job, upstream, job_open, upstream_open);
}

/// The name the job's name server gave for `destination` (an IPv4 address), or nullopt,
/// having reported the connection to it on `port` as refused.
std::optional<std::string> NameOfDestination(const sockaddr_in& destination, uint16_t port, const RelayContext& context) {
  std::array<uint8_t, 4> address;
  std::memcpy(address.data(), &destination.sin_addr, 4);
  auto name = context.name_of(address);
  if (!name) {
    // An address the job's name server never gave: typed in, or found some other way.
    auto ip = IpAddressOf(reinterpret_cast<const sockaddr*>(&destination));
    context.report({ip ? ToString(*ip) : "?", port, "is an address: a job reaches hosts by name"});
    return std::nullopt;
  }
  if (!AllowsHost(context.rules, *name, port)) {
    context.report({*name, port, "not allowed on this port"});
    return std::nullopt;
  }
  return name;
}

}  // namespace

void ReportOtherPort(int connection, const RelayContext& context) {
  sockaddr_in destination{};
  socklen_t length = sizeof destination;
  // Where the connection was meant to go before the rule sent it here; a connection made to
  // the refusing socket's own address (a loopback one, which the rule leaves alone) has none.
  if (getsockopt(connection, SOL_IP, SO_ORIGINAL_DST, &destination, &length) != 0 || destination.sin_family != AF_INET) {
    length = sizeof destination;
    if (getsockname(connection, reinterpret_cast<sockaddr*>(&destination), &length) != 0 || destination.sin_family != AF_INET) return;
  }
  const uint16_t port = ntohs(destination.sin_port);
  if (auto name = NameOfDestination(destination, port, context)) context.report({*name, port, "not allowed on this port"});
}

void RelayConnection(UniqueFd connection, uint16_t port, const RelayContext& context) {
  sockaddr_in local{};
  socklen_t length = sizeof local;
  if (getsockname(connection.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0 || local.sin_family != AF_INET) return;
  auto name = NameOfDestination(local, port, context);
  if (!name) return;
  UniqueFd upstream = ConnectUpstream(*name, port, context);
  if (!upstream) return;
  int on = 1;
  setsockopt(upstream.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(connection.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  Relay(connection.get(), upstream.get(), *name, port, context);
}

}  // namespace sandboxd::network
