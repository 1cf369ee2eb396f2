#include "text/text_source.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"

namespace sandboxd {
namespace {

void CopyOut(std::string_view text, uint64_t offset, size_t length, char* out) {
  if (offset > text.size() || length > text.size() - offset)
    throw Error(Code::kFailed, "read past the end of a text (" + std::to_string(offset + length) + " of " +
                                   std::to_string(text.size()) + " bytes)");
  if (length != 0) memcpy(out, text.data() + offset, length);
}

bool SameTime(const struct timespec& a, const struct timespec& b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

}  // namespace

void MemoryText::Read(uint64_t offset, size_t length, char* out) const { CopyOut(text_, offset, length, out); }

void StringText::Read(uint64_t offset, size_t length, char* out) const { CopyOut(text_, offset, length, out); }

FileText::FileText(UniqueFd fd, const struct stat& st, std::string name)
    : fd_(std::move(fd)), size_(static_cast<uint64_t>(st.st_size)), mtime_(st.st_mtim), ctime_(st.st_ctim), name_(std::move(name)) {}

void FileText::Read(uint64_t offset, size_t length, char* out) const {
  if (offset > size_ || length > size_ - offset)
    throw Error(Code::kFailed, "read past the end of " + name_);
  size_t done = 0;
  while (done < length) {
    ssize_t got = pread(fd_.get(), out + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read " + name_);
    // Shorter than when it was opened: what was read so far may belong to another version.
    if (got == 0) throw Error(Code::kFailed, name_ + " changed while it was read (it is shorter now)");
    done += static_cast<size_t>(got);
  }
}

void FileText::CheckUnchanged() const {
  struct stat st;
  if (fstat(fd_.get(), &st) != 0) ThrowErrno("cannot stat " + name_);
  if (static_cast<uint64_t>(st.st_size) != size_ || !SameTime(st.st_mtim, mtime_) || !SameTime(st.st_ctim, ctime_))
    throw Error(Code::kFailed, name_ + " changed while it was read");
}

}  // namespace sandboxd
