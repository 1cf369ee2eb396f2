#include "text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "beneath.h"
#include "errors.h"
#include "fd.h"
#include "text_patch.h"

namespace sandboxd {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

std::optional<std::string> Refuse(std::string* why_not, const std::string& reason) {
  if (why_not) *why_not = reason;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ReadTextFile(int root_fd, const std::string& path, size_t max_text_bytes,
                                        std::string* why_not) {
  CheckRelativePath(path);
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(root_fd, parent_path, O_PATH | O_DIRECTORY);
  struct stat st;
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Refuse(why_not, "is missing");
  if (!S_ISREG(st.st_mode)) return Refuse(why_not, "is not a regular file");
  if (static_cast<size_t>(st.st_size) > max_text_bytes) return Refuse(why_not, "is too large to be shown as text");
  // O_NONBLOCK: should the file turn into a fifo after the stat, opening it must not hang.
  UniqueFd file(openat(parent.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!file) return Refuse(why_not, std::string("cannot be read: ") + strerror(errno));
  if (fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Refuse(why_not, "is not a regular file");
  std::string content;
  char buffer[kReadChunk];
  for (;;) {
    ssize_t got = read(file.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) ThrowErrno("cannot read " + path);
    if (got == 0) break;
    content.append(buffer, static_cast<size_t>(got));
    // It may have grown since the stat: stop at the limit rather than read it whole.
    if (content.size() > max_text_bytes) return Refuse(why_not, "is too large to be shown as text");
  }
  if (LooksBinary(content)) return Refuse(why_not, "is binary");
  return content;
}

std::optional<TextModification> ReadTextModification(int live_fd, int upper_fd, const std::string& path,
                                                     size_t max_text_bytes, std::string* why_not) {
  std::string reason;
  auto old_text = ReadTextFile(live_fd, path, max_text_bytes, &reason);
  if (!old_text) {
    if (why_not) *why_not = "the live file " + reason;
    return std::nullopt;
  }
  auto new_text = ReadTextFile(upper_fd, path, max_text_bytes, &reason);
  if (!new_text) {
    if (why_not) *why_not = "the sandbox's file " + reason;
    return std::nullopt;
  }
  return TextModification{std::move(*old_text), std::move(*new_text)};
}

bool MayHaveHunks(const Change& change) {
  return change.kind == ChangeKind::kModified && change.old_type == EntryType::kFile && change.new_type == EntryType::kFile;
}

}  // namespace sandboxd
