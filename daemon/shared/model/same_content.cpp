#include "model/same_content.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "base/beneath.h"
#include "base/errors.h"
#include "unique_fd.h"

namespace sandboxd {
namespace {

constexpr size_t kCompareChunk = 64 * 1024;

/// One side of `path`: its parent directory and lstat, or nothing when it is missing.
struct Entry {
  UniqueFd parent;
  std::string name;
  struct stat st {};
};

std::optional<Entry> Lookup(int root_fd, const std::string& path) {
  Entry entry;
  std::string parent_path;
  std::tie(parent_path, entry.name) = SplitParent(path);
  entry.parent = OpenBeneath(root_fd, parent_path, O_PATH | O_DIRECTORY);
  if (!entry.parent || fstatat(entry.parent.get(), entry.name.c_str(), &entry.st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return entry;
}

std::optional<std::string> LinkTarget(const Entry& entry) {
  std::vector<char> buffer(256);
  for (;;) {
    ssize_t size = readlinkat(entry.parent.get(), entry.name.c_str(), buffer.data(), buffer.size());
    if (size < 0) return std::nullopt;
    if (static_cast<size_t>(size) < buffer.size()) return std::string(buffer.data(), static_cast<size_t>(size));
    buffer.resize(buffer.size() * 2);
  }
}

UniqueFd OpenRegular(const Entry& entry) {
  // O_NONBLOCK: should the file turn into a fifo after the lstat, opening it must not hang.
  UniqueFd file(openat(entry.parent.get(), entry.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat st;
  if (file && (fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode))) file.reset();
  return file;
}

/// Reads up to `size` bytes, fewer only at the end of the file.
size_t ReadFull(int fd, char* buffer, size_t size, const std::string& path) {
  size_t filled = 0;
  while (filled < size) {
    ssize_t got = read(fd, buffer + filled, size - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read " + path);
    if (got == 0) break;
    filled += static_cast<size_t>(got);
  }
  return filled;
}

bool SameBytes(const Entry& live, const Entry& upper, const std::string& path) {
  if (live.st.st_size != upper.st.st_size) return false;
  UniqueFd a = OpenRegular(live), b = OpenRegular(upper);
  if (!a || !b) return false;
  std::vector<char> buffer_a(kCompareChunk), buffer_b(kCompareChunk);
  for (;;) {
    // Both files are read to their real end, not their stat size: either may change meanwhile.
    size_t got_a = ReadFull(a.get(), buffer_a.data(), buffer_a.size(), path);
    size_t got_b = ReadFull(b.get(), buffer_b.data(), buffer_b.size(), path);
    if (got_a != got_b || memcmp(buffer_a.data(), buffer_b.data(), got_a) != 0) return false;
    if (got_a < kCompareChunk) return true;
  }
}

}  // namespace

bool SameContent(int live_fd, int upper_fd, const std::string& path) { return SameContent(live_fd, path, upper_fd, path); }

bool SameContent(int live_fd, const std::string& live_path, int upper_fd, const std::string& upper_path) {
  CheckRelativePath(live_path);
  CheckRelativePath(upper_path);
  const std::string& path = upper_path;
  auto live = Lookup(live_fd, live_path);
  auto upper = Lookup(upper_fd, upper_path);
  if (!live || !upper) return false;
  if (S_ISLNK(live->st.st_mode) && S_ISLNK(upper->st.st_mode)) {
    auto live_target = LinkTarget(*live), upper_target = LinkTarget(*upper);
    return live_target && upper_target && *live_target == *upper_target;
  }
  if (S_ISREG(live->st.st_mode) && S_ISREG(upper->st.st_mode)) return SameBytes(*live, *upper, path);
  return false;
}

}  // namespace sandboxd
