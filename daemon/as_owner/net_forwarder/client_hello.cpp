#include "net_forwarder/client_hello.h"

#include <vector>

namespace sandboxd::network {
namespace {

constexpr uint8_t kHandshakeRecord = 22;
constexpr uint8_t kClientHelloMessage = 1;
constexpr uint16_t kServerNameExtension = 0;
constexpr uint8_t kHostNameType = 0;
constexpr size_t kRecordHeader = 5;

/// A bounded reader over one message: every read checks what is left.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool Skip(size_t count) {
    if (count > bytes_.size() - at_) return false;
    at_ += count;
    return true;
  }
  bool Read(size_t width, size_t* value) {
    if (width > bytes_.size() - at_) return false;
    *value = 0;
    for (size_t i = 0; i < width; ++i) *value = *value << 8 | bytes_[at_++];
    return true;
  }
  /// The next `count` bytes as a cursor of their own.
  bool Sub(size_t count, Cursor* sub) {
    if (count > bytes_.size() - at_) return false;
    *sub = Cursor(bytes_.subspan(at_, count));
    at_ += count;
    return true;
  }
  bool Empty() const { return at_ == bytes_.size(); }
  std::span<const uint8_t> Rest() const { return bytes_.subspan(at_); }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

ClientHello Malformed() { return {ClientHello::State::kMalformed, std::nullopt}; }

/// The host name of a server_name extension's body; nullopt in `*name` when it names none.
bool ReadServerName(Cursor body, std::optional<std::string>* name) {
  size_t list_length = 0;
  Cursor list({});
  if (!body.Read(2, &list_length) || !body.Sub(list_length, &list) || !body.Empty()) return false;
  while (!list.Empty()) {
    size_t type = 0, length = 0;
    Cursor entry({});
    if (!list.Read(1, &type) || !list.Read(2, &length) || !list.Sub(length, &entry)) return false;
    if (type == kHostNameType && !name->has_value()) {
      auto bytes = entry.Rest();
      if (bytes.empty()) return false;
      *name = std::string(bytes.begin(), bytes.end());
    }
  }
  return true;
}

ClientHello ReadHello(Cursor hello) {
  size_t length = 0;
  Cursor extensions({});
  // legacy_version, random, legacy_session_id, cipher_suites, legacy_compression_methods
  if (!hello.Skip(2 + 32) || !hello.Read(1, &length) || length > 32 || !hello.Skip(length) ||
      !hello.Read(2, &length) || length < 2 || length % 2 != 0 || !hello.Skip(length) ||
      !hello.Read(1, &length) || length < 1 || !hello.Skip(length))
    return Malformed();
  ClientHello result{ClientHello::State::kRead, std::nullopt};
  if (hello.Empty()) return result;  // no extensions (TLS 1.2 and before may send none)
  if (!hello.Read(2, &length) || !hello.Sub(length, &extensions) || !hello.Empty()) return Malformed();
  bool seen_server_name = false;
  while (!extensions.Empty()) {
    size_t type = 0;
    Cursor body({});
    if (!extensions.Read(2, &type) || !extensions.Read(2, &length) || !extensions.Sub(length, &body)) return Malformed();
    if (type != kServerNameExtension) continue;
    // Two server_name extensions could tell the forwarder one name and the server another.
    if (seen_server_name || !ReadServerName(body, &result.server_name)) return Malformed();
    seen_server_name = true;
  }
  return result;
}

}  // namespace

ClientHello ReadClientHello(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return {};
  if (bytes[0] != kHandshakeRecord) return {ClientHello::State::kNotTls, std::nullopt};
  // The handshake message may span records: their payloads joined, up to the message's length.
  std::vector<uint8_t> message;
  size_t at = 0;
  for (;;) {
    if (bytes.size() - at < kRecordHeader) return {};
    if (bytes[at] != kHandshakeRecord || bytes[at + 1] != 3) return at == 0 ? ClientHello{ClientHello::State::kNotTls, std::nullopt} : Malformed();
    size_t record_length = static_cast<size_t>(bytes[at + 3] << 8 | bytes[at + 4]);
    if (record_length == 0 || record_length > 16384) return Malformed();
    if (bytes.size() - at - kRecordHeader < record_length) {
      if (at + kRecordHeader + record_length > kMaxClientHello) return Malformed();
      return {};
    }
    message.insert(message.end(), bytes.begin() + static_cast<std::ptrdiff_t>(at + kRecordHeader),
                   bytes.begin() + static_cast<std::ptrdiff_t>(at + kRecordHeader + record_length));
    at += kRecordHeader + record_length;
    if (message.size() >= 4) {
      if (message[0] != kClientHelloMessage) return Malformed();
      size_t hello_length = static_cast<size_t>(message[1]) << 16 | static_cast<size_t>(message[2]) << 8 | message[3];
      if (hello_length + 4 > kMaxClientHello) return Malformed();
      if (message.size() >= hello_length + 4)
        return ReadHello(Cursor(std::span<const uint8_t>(message).subspan(4, hello_length)));
    }
    if (at >= kMaxClientHello) return Malformed();
  }
}

}  // namespace sandboxd::network
