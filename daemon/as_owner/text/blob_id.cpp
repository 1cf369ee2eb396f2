#include "text/blob_id.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "base/errors.h"

namespace sandboxd {
namespace {

/// What is read of the content at a time.
constexpr size_t kHashPiece = 256 * 1024;

/// OpenSSL's SHA-1 (libcrypto: the one digest library sandboxd links, content_digest.h too),
/// its context freed however we leave.
class Sha1 {
 public:
  Sha1() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha1(), nullptr) != 1) throw Error(Code::kFailed, "SHA-1 is not available");
  }
  void Add(const void* bytes, size_t length) {
    if (EVP_DigestUpdate(context_.get(), bytes, length) != 1) throw Error(Code::kFailed, "SHA-1 failed");
  }
  std::array<unsigned char, 20> Finish() {
    std::array<unsigned char, 20> digest;
    unsigned int size = 0;
    if (EVP_DigestFinal_ex(context_.get(), digest.data(), &size) != 1 || size != digest.size()) throw Error(Code::kFailed, "SHA-1 failed");
    return digest;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context_;
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
    std::vector<char> piece(static_cast<size_t>(std::min<uint64_t>(size, kHashPiece)));
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
