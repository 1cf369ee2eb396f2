#pragma once
/// The server name a TLS client asks for (the SNI of its ClientHello, RFC 8446 4.1.2 and RFC
/// 6066 3), read from the first bytes a job sends on a connection, so that a job allowed to
/// reach one name cannot ask the same address for another (a CDN serves many). Read without
/// interception: the bytes are only looked at, then passed on unchanged. Everything here is
/// the job's to choose; the reader bounds every length by what it has.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace sandboxd::network {

/// How many bytes of a connection the reader looks at, at most (a ClientHello with a large key
/// share is a few KiB; one past a record of 16 KiB is no client's).
inline constexpr size_t kMaxClientHello = 20 * 1024;

struct ClientHello {
  enum class State {
    kNeedMore,   ///< a TLS handshake so far, not yet whole
    kNotTls,     ///< the connection does not start with a TLS handshake record
    kMalformed,  ///< a handshake record that is not a readable ClientHello
    kRead,       ///< a whole ClientHello: server_name is its host name, if it names one
  };
  State state = State::kNeedMore;
  std::optional<std::string> server_name;  ///< as sent (compared by the caller, case-blind)
};

/// What the first `bytes` of a connection say.
ClientHello ReadClientHello(std::span<const uint8_t> bytes);

}  // namespace sandboxd::network
