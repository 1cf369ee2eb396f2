#include "base/directory_listing.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace sandboxd {

DirectoryListing::DirectoryListing(UniqueFd readable) {
  if (!readable) return;
  dir_ = fdopendir(readable.get());
  if (dir_) readable.release();  // the DIR owns it now
}

DirectoryListing DirectoryListing::Of(int dir_fd) {
  return DirectoryListing(UniqueFd(openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
}

DirectoryListing DirectoryListing::AtPath(const std::string& path) {
  return DirectoryListing(UniqueFd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)));
}

const dirent* DirectoryListing::Next() {
  if (!dir_) return nullptr;
  for (;;) {
    errno = 0;
    const dirent* entry = readdir(dir_);
    if (!entry) return nullptr;
    if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) return entry;
  }
}

std::vector<std::string> DirectoryListing::Names() {
  std::vector<std::string> names;
  while (const dirent* entry = Next()) names.emplace_back(entry->d_name);
  return names;
}

}  // namespace sandboxd
