#include "helpers/content_digest.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "base/beneath.h"
#include "unique_fd.h"

namespace sandboxd {

std::string ContentDigest(int dirfd, const std::string& path) {
  // O_NONBLOCK: a fifo a job made there must not hold the helper; it is no regular file.
  UniqueFd file = OpenBeneath(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (!file) {
    if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == ENXIO) return "none";
    return std::string("unreadable: ") + strerrorname_np(errno);
  }
  struct stat st;
  if (fstat(file.get(), &st) != 0) return std::string("unreadable: ") + strerrorname_np(errno);
  if (!S_ISREG(st.st_mode)) return "none";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) return "unreadable: no SHA-256";
  std::vector<unsigned char> buffer(1 << 20);
  for (;;) {
    ssize_t got = read(file.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::string("unreadable: ") + strerrorname_np(errno);
    if (got == 0) break;
    EVP_DigestUpdate(context.get(), buffer.data(), static_cast<size_t>(got));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(context.get(), digest, &size);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "sha256:";
  for (unsigned int i = 0; i < size; ++i) {
    text += kHex[digest[i] >> 4];
    text += kHex[digest[i] & 15];
  }
  return text;
}

}  // namespace sandboxd
