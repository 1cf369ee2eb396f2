#include "sandbox/stale_origins.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <unistd.h>

#include <cerrno>
#include <set>

#include "base/beneath.h"
#include "unique_fd.h"
#include "runtime/file_handle.h"

namespace sandboxd {
namespace {

constexpr const char* kOrigin = "trusted.overlay.origin";
constexpr size_t kHeader = 5 + 16;  // version, magic, length, flags, type; uuid

std::string ReadOrigin(int dir_fd) {
  std::string value(256, '\0');
  ssize_t got = fgetxattr(dir_fd, kOrigin, value.data(), value.size());
  if (got < 0 && errno == ERANGE) {
    got = fgetxattr(dir_fd, kOrigin, nullptr, 0);
    if (got > 0) {
      value.resize(static_cast<size_t>(got));
      got = fgetxattr(dir_fd, kOrigin, value.data(), value.size());
    }
  }
  return got > 0 ? value.substr(0, static_cast<size_t>(got)) : "";
}

bool IsDirectory(int root_fd, const std::string& path) {
  auto found = StatBeneath(root_fd, path);
  return found && S_ISDIR(found->st_mode);
}

}  // namespace

bool OriginNamesHandle(const std::string& origin, int type, const std::string& handle) {
  if (origin.size() < kHeader || static_cast<unsigned char>(origin[1]) != 0xfb) return false;
  if (static_cast<unsigned char>(origin[4]) != static_cast<unsigned char>(type)) return false;
  return origin.compare(kHeader, std::string::npos, handle) == 0;
}

std::string IndexName(const std::string& origin) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (unsigned char c : origin) {
    name += kHex[c >> 4];
    name += kHex[c & 15];
  }
  return name;
}

size_t ForgetStaleOrigins(int live_root_fd, int upper_root_fd, int index_fd, const std::vector<std::string>& paths) {
  std::set<std::string> dirs;
  for (const auto& path : paths)
    for (std::string at = path; at != "." && !at.empty(); at = SplitParent(at).first) dirs.insert(at);
  size_t removed = 0;
  for (const auto& dir : dirs) {
    if (!IsDirectory(upper_root_fd, dir) || !IsDirectory(live_root_fd, dir)) continue;
    UniqueFd upper(OpenBeneath(upper_root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    UniqueFd live(OpenBeneath(live_root_fd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!upper || !live) continue;
    std::string origin = ReadOrigin(upper.get());
    if (origin.empty()) continue;
    auto handle = FileHandleOf(live.get());
    if (!handle || OriginNamesHandle(origin, handle->type, handle->bytes)) continue;
    if (fremovexattr(upper.get(), kOrigin) != 0) continue;
    ++removed;
    // nfs_export indexes every copied-up directory by its origin and checks each index entry
    // against its directory's origin at mount: an entry whose directory has none fails the
    // mount (ENODATA). The entry goes with the origin.
    if (index_fd >= 0) {
      std::string name = IndexName(origin);
      if (unlinkat(index_fd, name.c_str(), AT_REMOVEDIR) != 0) unlinkat(index_fd, name.c_str(), 0);
    }
  }
  return removed;
}

}  // namespace sandboxd
