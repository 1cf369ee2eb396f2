#include "text/blob_id.h"

#include <mbedtls/sha1.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// What is read of the content at a time.
constexpr size_t kPiece = 256 * 1024;

/// mbedtls's SHA-1 context, freed however we leave.
class Sha1 {
 public:
  Sha1() {
    mbedtls_sha1_init(&context_);
    Check(mbedtls_sha1_starts_ret(&context_));
  }
  ~Sha1() { mbedtls_sha1_free(&context_); }
  Sha1(const Sha1&) = delete;
  Sha1& operator=(const Sha1&) = delete;
  void Add(const void* bytes, size_t length) {
    Check(mbedtls_sha1_update_ret(&context_, static_cast<const unsigned char*>(bytes), length));
  }
  std::array<unsigned char, 20> Finish() {
    std::array<unsigned char, 20> digest;
    Check(mbedtls_sha1_finish_ret(&context_, digest.data()));
    return digest;
  }

 private:
  static void Check(int status) {
    if (status != 0) throw Error(Code::kFailed, "SHA-1 failed (mbedtls error " + std::to_string(status) + ")");
  }
  mbedtls_sha1_context context_;
};

}  // namespace

std::string BlobId(const TextSource& content) {
  Sha1 sha1;
  const uint64_t size = content.size();
  // The object header git hashes before the bytes: "blob", a space, the size in decimal, a NUL.
  const std::string header = "blob " + std::to_string(size);
  sha1.Add(header.c_str(), header.size() + 1);
  if (auto whole = content.InMemory()) {
    sha1.Add(whole->data(), whole->size());
  } else {
    std::vector<char> piece(static_cast<size_t>(std::min<uint64_t>(size, kPiece)));
    for (uint64_t offset = 0; offset < size;) {
      size_t length = static_cast<size_t>(std::min<uint64_t>(size - offset, piece.size()));
      content.Read(offset, length, piece.data());
      sha1.Add(piece.data(), length);
      offset += length;
    }
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : sha1.Finish()) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

}  // namespace sandboxd
