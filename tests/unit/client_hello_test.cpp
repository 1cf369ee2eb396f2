#include "net_forwarder/client_hello.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sandboxd::network {
namespace {

// A real ClientHello: Python's ssl module (OpenSSL 3) connecting to pypi.example.org, 517 bytes.
const char kPythonHello[] =
    "1603010200010001fc0303dfe31b033a6811c6e2015445209560d78ac079c088e8460df481673d67934cf0207e517268574a"
    "be42d931c5f4501f0fe472d4f6a4b6e209158d225fa028e8568e0024130213031301c02cc030c02bc02fcca9cca8c024c028"
    "c023c027009f009e006b006700ff0100018f000000150013000010707970692e6578616d706c652e6f7267000b0004030001"
    "02000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a00280403050306"
    "03080708080809080a080b080408050806040105010601030303010302040205020602002b00050403040303002d00020101"
    "003300260024001d0020546179287b5db3983f090f2a9f03a65ca1522a850cd3f09afe5303393cb35350001500dd00000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000";

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return bytes;
}

void Put16(std::vector<uint8_t>& out, size_t value) {
  out.push_back(static_cast<uint8_t>(value >> 8));
  out.push_back(static_cast<uint8_t>(value));
}

std::vector<uint8_t> ServerNameExtension(const std::vector<std::string>& names) {
  std::vector<uint8_t> list;
  for (const auto& name : names) {
    list.push_back(0);
    Put16(list, name.size());
    list.insert(list.end(), name.begin(), name.end());
  }
  std::vector<uint8_t> body;
  Put16(body, list.size());
  body.insert(body.end(), list.begin(), list.end());
  std::vector<uint8_t> extension;
  Put16(extension, 0);
  Put16(extension, body.size());
  extension.insert(extension.end(), body.begin(), body.end());
  return extension;
}

/// A minimal ClientHello with these extensions, in records of at most `record_size` bytes.
std::vector<uint8_t> Hello(const std::vector<std::vector<uint8_t>>& extensions, size_t record_size = 16384) {
  std::vector<uint8_t> body = {3, 3};
  body.insert(body.end(), 32, 0xaa);  // random
  body.push_back(0);                  // no session id
  Put16(body, 2);
  body.push_back(0x13);
  body.push_back(0x01);  // TLS_AES_128_GCM_SHA256
  body.push_back(1);
  body.push_back(0);  // null compression
  std::vector<uint8_t> joined;
  for (const auto& extension : extensions) joined.insert(joined.end(), extension.begin(), extension.end());
  Put16(body, joined.size());
  body.insert(body.end(), joined.begin(), joined.end());
  std::vector<uint8_t> message = {1, static_cast<uint8_t>(body.size() >> 16), static_cast<uint8_t>(body.size() >> 8),
                                  static_cast<uint8_t>(body.size())};
  message.insert(message.end(), body.begin(), body.end());
  std::vector<uint8_t> records;
  for (size_t at = 0; at < message.size(); at += record_size) {
    size_t length = std::min(record_size, message.size() - at);
    records.insert(records.end(), {22, 3, 1});
    Put16(records, length);
    records.insert(records.end(), message.begin() + static_cast<long>(at), message.begin() + static_cast<long>(at + length));
  }
  return records;
}

TEST(ClientHelloTest, ReadsTheServerNameOfARealClientHello) {
  auto bytes = FromHex(kPythonHello);
  ASSERT_EQ(bytes.size(), 517u);
  auto hello = ReadClientHello(bytes);
  EXPECT_EQ(hello.state, ClientHello::State::kRead);
  EXPECT_EQ(hello.server_name, "pypi.example.org");
}

TEST(ClientHelloTest, NeedsMoreUntilTheWholeHelloIsThere) {
  auto bytes = FromHex(kPythonHello);
  for (size_t length : {size_t{1}, size_t{4}, size_t{5}, size_t{6}, size_t{100}, bytes.size() - 1}) {
    auto hello = ReadClientHello(std::span<const uint8_t>(bytes).first(length));
    EXPECT_EQ(hello.state, ClientHello::State::kNeedMore) << length << " bytes";
    EXPECT_FALSE(hello.server_name) << length << " bytes";
  }
}

TEST(ClientHelloTest, AHelloSplitAcrossRecordsIsReadWhole) {
  auto bytes = Hello({ServerNameExtension({"files.example.org"})}, 7);
  auto hello = ReadClientHello(bytes);
  EXPECT_EQ(hello.state, ClientHello::State::kRead);
  EXPECT_EQ(hello.server_name, "files.example.org");
  EXPECT_EQ(ReadClientHello(std::span<const uint8_t>(bytes).first(bytes.size() - 3)).state, ClientHello::State::kNeedMore);
}

TEST(ClientHelloTest, PlainProtocolsAreNotTls) {
  for (std::string start : {"GET / HTTP/1.1\r\n", "SSH-2.0-OpenSSH", "\x16\x01\x02\x03\x04\x05"}) {
    std::vector<uint8_t> bytes(start.begin(), start.end());
    EXPECT_EQ(ReadClientHello(bytes).state, ClientHello::State::kNotTls) << start;
  }
}

TEST(ClientHelloTest, AHelloWithoutAServerNameIsReadAndNamesNone) {
  auto hello = ReadClientHello(Hello({}));
  EXPECT_EQ(hello.state, ClientHello::State::kRead);
  EXPECT_FALSE(hello.server_name);
}

TEST(ClientHelloTest, TwoServerNameExtensionsAreMalformed) {
  // One name for the forwarder's check and another for the server would otherwise get through.
  auto hello = ReadClientHello(Hello({ServerNameExtension({"pypi.example.org"}), ServerNameExtension({"evil.example"})}));
  EXPECT_EQ(hello.state, ClientHello::State::kMalformed);
}

TEST(ClientHelloTest, TheFirstHostNameOfAListIsTheOneRead) {
  auto hello = ReadClientHello(Hello({ServerNameExtension({"pypi.example.org", "evil.example"})}));
  EXPECT_EQ(hello.server_name, "pypi.example.org");
}

TEST(ClientHelloTest, LengthsPastTheirMessageAreMalformed) {
  auto bytes = Hello({ServerNameExtension({"pypi.example.org"})});
  // The server_name list's length (after record 5, handshake 4, fixed fields 2+32+1+2+2+1+1,
  // extensions' length 2, extension type and length 4) claims more than the extension holds.
  size_t list_length_at = 5 + 4 + 2 + 32 + 1 + 2 + 2 + 1 + 1 + 2 + 4;
  bytes[list_length_at] = 0x7f;
  EXPECT_EQ(ReadClientHello(bytes).state, ClientHello::State::kMalformed);
}

TEST(ClientHelloTest, AHelloLongerThanTheLimitIsMalformedNotAwaited) {
  std::vector<uint8_t> padding = {0x00, 0x15};  // the padding extension
  Put16(padding, kMaxClientHello);
  padding.insert(padding.end(), kMaxClientHello, 0);
  auto bytes = Hello({padding});
  EXPECT_EQ(ReadClientHello(std::span<const uint8_t>(bytes).first(kMaxClientHello + 10)).state, ClientHello::State::kMalformed);
}

TEST(ClientHelloTest, EveryCutOfARealHelloIsReadWithoutOverrun) {
  // Run under ASan in tests/sanitize: each prefix, and each byte of the hello set to 0xff.
  auto bytes = FromHex(kPythonHello);
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto changed = bytes;
    changed[i] = 0xff;
    auto hello = ReadClientHello(changed);
    if (hello.state == ClientHello::State::kRead && hello.server_name) {
      EXPECT_FALSE(hello.server_name->empty());
    }
    ReadClientHello(std::span<const uint8_t>(bytes).first(i));
  }
}

}  // namespace
}  // namespace sandboxd::network
