#include "commit/overlay_marks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>

#include "base/beneath.h"
#include "base/errors.h"
#include "base/overlay.h"

namespace sandboxd {
namespace {

constexpr const char* kMarks[] = {"origin", "nlink"};

// Each entry: its root, inode and the sizes as fixed-size numbers, then its path, the mark's
// name and its value (a path may hold any byte but NUL; a value any byte).
struct Record {
  uint32_t root;
  uint32_t path_size;
  uint64_t ino;
  uint32_t name_size;
  uint32_t value_size;
};

/// Reads exactly `size` bytes; false at the end of the file (or a note cut short by a kill).
bool ReadExactly(int fd, void* into, size_t size, const std::string& shown) {
  auto* at = static_cast<char*>(into);
  while (size > 0) {
    ssize_t got = read(fd, at, size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read " + shown);
    if (got == 0) return false;
    at += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace

OverlayMarksTaken::OverlayMarksTaken(const std::string& path) : path_(path) {
  file_.reset(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file_) ThrowErrno("cannot create " + path);
}

void OverlayMarksTaken::TakeFrom(int entry, size_t root, const std::string& path) {
  struct stat st;
  if (fstat(entry, &st) != 0) ThrowErrno("cannot stat " + path + " in the sandbox");
  for (const char* mark : kMarks) {
    std::string name = std::string(OverlayXattrPrefix()) + mark;
    std::string value(256, '\0');
    ssize_t size = fgetxattr(entry, name.c_str(), value.data(), value.size());
    if (size < 0 && errno == ERANGE) {
      size = fgetxattr(entry, name.c_str(), nullptr, 0);
      value.resize(size > 0 ? static_cast<size_t>(size) : 0);
      if (size > 0) size = fgetxattr(entry, name.c_str(), value.data(), value.size());
    }
    if (size < 0) {
      if (errno == ENODATA || errno == ENOTSUP) continue;
      ThrowErrno("cannot read overlay attributes of " + path + " in the sandbox");
    }
    value.resize(static_cast<size_t>(size));
    Record record{static_cast<uint32_t>(root), static_cast<uint32_t>(path.size()), static_cast<uint64_t>(st.st_ino),
                  static_cast<uint32_t>(name.size()), static_cast<uint32_t>(value.size())};
    std::string note(reinterpret_cast<const char*>(&record), sizeof record);
    note += path + name + value;
    // One write: the note is whole in the file (the kernel's page cache) before the mark goes.
    if (write(file_.get(), note.data(), note.size()) != static_cast<ssize_t>(note.size())) ThrowErrno("cannot write " + path_);
    if (fremovexattr(entry, name.c_str()) != 0 && errno != ENODATA)
      ThrowErrno("cannot clear overlay attributes of " + path + " in the sandbox");
  }
}

void OverlayMarksTaken::Close() {
  if (fsync(file_.get()) != 0) ThrowErrno("cannot sync " + path_);
  file_.reset();
}

size_t GiveBackOverlayMarks(const std::string& path, const std::vector<int>& upper_fds) {
  UniqueFd file(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file) {
    if (errno == ENOENT) return 0;
    ThrowErrno("cannot open " + path);
  }
  std::map<size_t, ParentDirs> uppers;
  size_t given = 0;
  std::string last;  // the entry of the previous note: its marks come one after the other
  Record record;
  while (ReadExactly(file.get(), &record, sizeof record, path)) {
    std::string entry_path(record.path_size, '\0'), name(record.name_size, '\0'), value(record.value_size, '\0');
    if (!ReadExactly(file.get(), entry_path.data(), entry_path.size(), path) || !ReadExactly(file.get(), name.data(), name.size(), path) ||
        !ReadExactly(file.get(), value.data(), value.size(), path))
      break;  // cut short by a kill: that mark had not come off yet
    if (record.root >= upper_fds.size()) throw Error(Code::kFailed, path + " names root " + std::to_string(record.root));
    CheckRelativePath(entry_path);
    auto it = uppers.try_emplace(record.root, upper_fds[record.root]).first;
    std::string leaf;
    int parent = it->second.Open(entry_path, leaf);
    if (parent < 0) continue;  // gone from the upper: it is live now, or the job's again
    // Opened for reading (non-blocking, for a fifo): an xattr call through /proc/self/fd of an
    // O_PATH fd would act on the magic link itself.
    UniqueFd entry(openat(parent, leaf.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
    struct stat st;
    if (!entry || fstat(entry.get(), &st) != 0 || st.st_ino != record.ino) continue;  // another entry now
    if (fsetxattr(entry.get(), name.c_str(), value.data(), value.size(), 0) != 0)
      ThrowErrno("cannot give back the overlay attributes of " + entry_path + " in the sandbox");
    if (entry_path != last) ++given;
    last = entry_path;
  }
  return given;
}

}  // namespace sandboxd
