#pragma once
/// DirectoryListing: one directory's entries, read through a DIR of its own that closes with the
/// listing, whatever leaves the scope (a throw half-way included). "." and ".." are never
/// handed out.

#include <dirent.h>

#include <string>
#include <vector>

#include "unique_fd.h"

namespace sandboxd {

class DirectoryListing {
 public:
  /// Lists the directory `dir_fd` is open on (O_PATH will do): "." beneath it is opened for
  /// reading, so the caller's descriptor and its offset are never touched. Reading needs the
  /// caller's read permission on the directory, as any listing does.
  static DirectoryListing Of(int dir_fd);
  /// Lists the directory at `path` (a symlink on the way is followed, as opendir does).
  static DirectoryListing AtPath(const std::string& path);

  ~DirectoryListing() {
    if (dir_) closedir(dir_);
  }
  DirectoryListing(DirectoryListing&& other) noexcept : dir_(other.dir_) { other.dir_ = nullptr; }
  DirectoryListing& operator=(DirectoryListing&&) = delete;
  DirectoryListing(const DirectoryListing&) = delete;
  DirectoryListing& operator=(const DirectoryListing&) = delete;

  /// False when the directory could not be opened; errno says why.
  explicit operator bool() const { return dir_ != nullptr; }
  /// The next entry, or null at the end (errno is then non-zero for a read that failed).
  const dirent* Next();
  /// The listing's own descriptor: for *at() calls relative to the directory.
  int fd() const { return dirfd(dir_); }
  /// Every name left, in the directory's order.
  std::vector<std::string> Names();

 private:
  explicit DirectoryListing(UniqueFd readable);
  DIR* dir_ = nullptr;
};

}  // namespace sandboxd
