#include "commit/overlay_marks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

#include "base/beneath.h"
#include "base/errors.h"
#include "base/overlay.h"

namespace sandboxd {
namespace {

constexpr const char* kMarks[] = {"origin", "nlink"};

/// Entries whose notes go out in one write, then whose marks come off.
constexpr size_t kBatch = 256;

// Each entry: its root, inode and the sizes as fixed-size numbers, then its path, the mark's
// name and its value (a path may hold any byte but NUL; a value any byte).
struct MarkRecord {
  uint32_t root;
  uint32_t path_size;
  uint64_t ino;
  uint32_t name_size;
  uint32_t value_size;
};

// Linux 6.13's calls on an extended attribute of a name beneath a directory fd (glibc has no
// wrappers yet). New system calls share one number on every architecture but alpha and mips;
// elsewhere entries are opened.
#if !defined(__NR_getxattrat) && (defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || defined(__i386__) || \
                                  defined(__arm__) || defined(__powerpc64__) || defined(__s390x__))
#define __NR_getxattrat 464
#define __NR_removexattrat 466
#endif

struct XattrArgs {  // the kernel's struct xattr_args
  uint64_t value;
  uint32_t size;
  uint32_t flags;
};

ssize_t GetMarkByName(int parent, const char* leaf, const char* name, void* value, size_t size) {
#ifdef __NR_getxattrat
  XattrArgs args{reinterpret_cast<uintptr_t>(value), static_cast<uint32_t>(size), 0};
  return syscall(__NR_getxattrat, parent, leaf, AT_SYMLINK_NOFOLLOW, name, &args, sizeof args);
#else
  (void)parent, (void)leaf, (void)name, (void)value, (void)size;
  errno = ENOSYS;
  return -1;
#endif
}

int RemoveMarkByName(int parent, const char* leaf, const char* name) {
#ifdef __NR_removexattrat
  return static_cast<int>(syscall(__NR_removexattrat, parent, leaf, AT_SYMLINK_NOFOLLOW, name));
#else
  (void)parent, (void)leaf, (void)name;
  errno = ENOSYS;
  return -1;
#endif
}

void WriteWhole(int fd, const std::string& bytes, const std::string& shown) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t wrote = write(fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) ThrowErrno("cannot write " + shown);
    done += static_cast<size_t>(wrote);
  }
}

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

struct OverlayMarksTaken::Marked {
  int parent;         // kByName: the directory holding it
  std::string leaf;   // kByName: its name there
  UniqueFd entry;     // kThroughOpen: the entry, open for reading
  const std::string* path;
  size_t root;
  uint64_t ino;
  std::vector<std::pair<size_t, std::string>> marks;  // (index in names_, value)
};

OverlayMarksTaken::Calls OverlayMarksTaken::CallsOfThisKernel() {
  static const Calls calls = [] {
    char value[1];
    // Any answer but "no such call" (or a filter's "not allowed") says the kernel has it.
    if (GetMarkByName(AT_FDCWD, "/", "user.sandboxd.probe", value, sizeof value) < 0 && (errno == ENOSYS || errno == EPERM))
      return Calls::kThroughOpen;
    return Calls::kByName;
  }();
  return calls;
}

OverlayMarksTaken::OverlayMarksTaken(const std::string& path, Calls calls) : path_(path), calls_(calls) {
  for (const char* mark : kMarks) names_.push_back(std::string(OverlayXattrPrefix()) + mark);
  file_.reset(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file_) ThrowErrno("cannot create " + path);
}

void OverlayMarksTaken::TakeFromEach(int upper, size_t root, const std::vector<std::string>& paths) {
  ParentDirs dirs(upper);
  std::vector<Marked> batch;
  std::string batch_dir;
  for (const auto& path : paths) {
    // A batch never outlives its directory's fd, which the next directory's Open closes.
    std::string dir = SplitParent(path).first;
    if (!batch.empty() && (dir != batch_dir || batch.size() == kBatch)) TakeOff(batch);
    batch_dir = dir;
    Marked entry{-1, {}, {}, &path, root, 0, {}};
    int parent = dirs.Open(path, entry.leaf);
    if (parent < 0) continue;  // the helper will report it
    struct stat st;
    if (calls_ == Calls::kByName) {
      if (fstatat(parent, entry.leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      entry.parent = parent;
    } else {
      // Non-blocking, for a fifo: an xattr call through /proc/self/fd of an O_PATH fd would act
      // on the magic link itself and do nothing; a symlink or socket cannot be opened so.
      entry.entry.reset(openat(parent, entry.leaf.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
      if (!entry.entry) continue;
      if (fstat(entry.entry.get(), &st) != 0) ThrowErrno("cannot stat " + path + " in the sandbox");
    }
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISFIFO(st.st_mode)) continue;
    entry.ino = st.st_ino;
    for (size_t i = 0; i < names_.size(); ++i) {
      const char* name = names_[i].c_str();
      auto get = [&](void* value, size_t size) {
        return entry.entry ? fgetxattr(entry.entry.get(), name, value, size) : GetMarkByName(parent, entry.leaf.c_str(), name, value, size);
      };
      std::string value(256, '\0');
      ssize_t size = get(value.data(), value.size());
      if (size < 0 && errno == ERANGE) {
        size = get(nullptr, 0);
        value.resize(size > 0 ? static_cast<size_t>(size) : 0);
        if (size > 0) size = get(value.data(), value.size());
      }
      if (size < 0) {
        if (errno == ENODATA || errno == ENOTSUP) continue;
        ThrowErrno("cannot read overlay attributes of " + path + " in the sandbox");
      }
      value.resize(static_cast<size_t>(size));
      entry.marks.emplace_back(i, std::move(value));
    }
    if (!entry.marks.empty()) batch.push_back(std::move(entry));
  }
  TakeOff(batch);
}

void OverlayMarksTaken::TakeOff(std::vector<Marked>& batch) {
  if (batch.empty()) return;
  std::string notes;
  for (const auto& entry : batch) {
    for (const auto& [name, value] : entry.marks) {
      MarkRecord record{static_cast<uint32_t>(entry.root), static_cast<uint32_t>(entry.path->size()), entry.ino,
                        static_cast<uint32_t>(names_[name].size()), static_cast<uint32_t>(value.size())};
      notes.append(reinterpret_cast<const char*>(&record), sizeof record);
      notes += *entry.path + names_[name] + value;
    }
  }
  // The batch's notes are whole in the file (the kernel's page cache) before any of its marks
  // goes; a kill in the write cuts a note short, which gives back nothing that had come off.
  WriteWhole(file_.get(), notes, path_);
  for (const auto& entry : batch) {
    for (const auto& [name, value] : entry.marks) {
      const char* attribute = names_[name].c_str();
      int removed = entry.entry ? fremovexattr(entry.entry.get(), attribute) : RemoveMarkByName(entry.parent, entry.leaf.c_str(), attribute);
      if (removed != 0 && errno != ENODATA) ThrowErrno("cannot clear overlay attributes of " + *entry.path + " in the sandbox");
    }
  }
  batch.clear();
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
  MarkRecord record;
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
