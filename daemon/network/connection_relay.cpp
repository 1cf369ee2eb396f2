#include "network/connection_relay.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "network/client_hello.h"
#include "network/upstream_address.h"
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

void Relay(int job, int upstream, const std::string& name, uint16_t port, const RelayContext& context) {
  std::vector<uint8_t> buffer(kBufferSize);
  std::vector<uint8_t> first;  // the job's bytes while the server name check waits for them
  bool judged = false;
  bool job_open = true, upstream_open = true;
  while (job_open || upstream_open) {
    pollfd watched[2] = {{job, static_cast<short>(job_open ? POLLIN : 0), 0}, {upstream, static_cast<short>(upstream_open ? POLLIN : 0), 0}};
    if (poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (job_open && watched[0].revents) {
      ssize_t got = recv(job, buffer.data(), buffer.size(), 0);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (got <= 0) {
        job_open = false;
        if (!judged) return;  // closed before it could be judged: nothing of it is passed on
        shutdown(upstream, SHUT_WR);
      } else if (!judged) {
        first.insert(first.end(), buffer.begin(), buffer.begin() + got);
        Verdict verdict = Judge(first, name, port, context);
        if (verdict == Verdict::kRefuse) return;
        if (verdict == Verdict::kWait) continue;
        judged = true;
        if (!WriteAll(upstream, first.data(), first.size())) return;
        first.clear();
        first.shrink_to_fit();
      } else if (!WriteAll(upstream, buffer.data(), static_cast<size_t>(got))) {
        return;
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
}

}  // namespace

void RelayConnection(UniqueFd connection, uint16_t port, const RelayContext& context) {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (getsockname(connection.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0 || local.ss_family != AF_INET) return;
  std::array<uint8_t, 4> address;
  std::memcpy(address.data(), &reinterpret_cast<const sockaddr_in*>(&local)->sin_addr, 4);
  auto name = context.name_of(address);
  if (!name) {
    // An address the job's name server never gave: typed in, or found some other way.
    auto ip = IpAddressOf(reinterpret_cast<const sockaddr*>(&local));
    context.report({ip ? ToString(*ip) : "?", port, "is an address: a job reaches hosts by name"});
    return;
  }
  if (!AllowsHost(context.rules, *name, port)) {
    context.report({*name, port, "not allowed on this port"});
    return;
  }
  UniqueFd upstream = ConnectUpstream(*name, port, context);
  if (!upstream) return;
  int on = 1;
  setsockopt(upstream.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(connection.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  Relay(connection.get(), upstream.get(), *name, port, context);
}

}  // namespace sandboxd::network
