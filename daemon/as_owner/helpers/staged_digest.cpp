#include "helpers/staged_digest.h"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/index.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string_view>

#include "base/beneath.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

/// A SHA-256 fed fields one by one, each with its length first, so no two entry lists read alike.
class FieldHash {
 public:
  FieldHash() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    ok_ = context_ && EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) == 1;
  }
  void Add(std::string_view bytes) {
    uint64_t size = bytes.size();
    ok_ = ok_ && EVP_DigestUpdate(context_.get(), &size, sizeof size) == 1 && EVP_DigestUpdate(context_.get(), bytes.data(), bytes.size()) == 1;
  }
  void Add(uint64_t number) { Add(std::string_view(reinterpret_cast<const char*>(&number), sizeof number)); }
  void Add(const git_oid& id) { Add(std::string_view(reinterpret_cast<const char*>(id.id), sizeof id.id)); }
  std::string Hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned size = 0;
    if (!ok_ || EVP_DigestFinal_ex(context_.get(), digest, &size) != 1) return "";
    std::string hex = "sha256:";
    char pair[3];
    for (unsigned i = 0; i < size; ++i) {
      snprintf(pair, sizeof pair, "%02x", digest[i]);
      hex += pair;
    }
    return hex;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context_;
  bool ok_ = false;
};

}  // namespace

namespace {

std::string DigestOf(int fd);

}  // namespace

StagedIndex StagedDigest(int dirfd, const std::string& path) {
  UniqueFd file = OpenBeneath(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (!file || fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  std::string digest = DigestOf(file.get());
  // Every write moves the ctime: one that is where it was after the read read these bytes.
  struct stat after;
  if (fstat(file.get(), &after) != 0 || after.st_ctim.tv_sec != st.st_ctim.tv_sec || after.st_ctim.tv_nsec != st.st_ctim.tv_nsec)
    return {};
  return {digest, after.st_ino, int64_t{after.st_ctim.tv_sec} * 1000000000 + after.st_ctim.tv_nsec};
}

namespace {

std::string DigestOf(int fd) {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
  // libgit2 reads an index by its path: this file's, through its open descriptor, so nothing
  // renamed or linked in meanwhile is read instead.
  git_index* opened = nullptr;
  if (git_index_open(&opened, ("/proc/self/fd/" + std::to_string(fd)).c_str()) != 0) return "";
  std::unique_ptr<git_index, decltype(&git_index_free)> index(opened, git_index_free);
  FieldHash hash;
  const size_t entries = git_index_entrycount(index.get());
  hash.Add(entries);
  for (size_t i = 0; i < entries; ++i) {
    const git_index_entry* entry = git_index_get_byindex(index.get(), i);
    if (!entry) return "";
    hash.Add(std::string_view(entry->path));
    hash.Add(entry->mode);
    hash.Add(entry->id);
    // The stage and the flags a user sets (assume-valid); the name length in flags is the path's.
    hash.Add(uint64_t{entry->flags} & (GIT_INDEX_ENTRY_STAGEMASK | GIT_INDEX_ENTRY_VALID));
    hash.Add(uint64_t{entry->flags_extended} & GIT_INDEX_ENTRY_EXTENDED_FLAGS);
  }
  // What undoes a resolved conflict (git checkout -m) is staged state too.
  const size_t undos = git_index_reuc_entrycount(index.get());
  hash.Add(undos);
  for (size_t i = 0; i < undos; ++i) {
    const git_index_reuc_entry* undo = git_index_reuc_get_byindex(index.get(), i);
    if (!undo) return "";
    hash.Add(std::string_view(undo->path));
    for (int side = 0; side < 3; ++side) {
      hash.Add(undo->mode[side]);
      hash.Add(undo->oid[side]);
    }
  }
  return hash.Hex();
}

}  // namespace
}  // namespace sandboxd
