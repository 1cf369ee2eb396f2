#include "text/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/beneath.h"
#include "base/errors.h"
#include "text/text_patch.h"

namespace sandboxd {
namespace {

std::string ReadWhole(const TextSource& text) {
  std::string content(static_cast<size_t>(text.size()), '\0');
  text.Read(0, content.size(), content.data());
  return content;
}

}  // namespace

std::string NotTextBecause(const TextSource& file, uint64_t max_text_bytes) {
  if (file.size() > max_text_bytes) return "is too large to be shown as text";
  std::string probe(static_cast<size_t>(std::min<uint64_t>(file.size(), kBinaryProbeBytes)), '\0');
  file.Read(0, probe.size(), probe.data());
  return LooksBinary(probe) ? "is binary" : "";
}

std::unique_ptr<FileText> OpenRegularFile(int parent_fd, const std::string& name, const std::string& shown) {
  // O_NONBLOCK: should the file turn into a fifo after a stat, opening it must not hang.
  UniqueFd file(openat(parent_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!file) return nullptr;
  struct stat st;
  if (fstat(file.get(), &st) != 0) return nullptr;
  if (!S_ISREG(st.st_mode)) {
    errno = EINVAL;
    return nullptr;
  }
  return std::make_unique<FileText>(std::move(file), st, shown);
}

std::unique_ptr<FileText> OpenTextFile(int root_fd, const std::string& path, uint64_t max_text_bytes, std::string* why_not,
                                       const std::string& shown) {
  auto refuse = [&](const std::string& reason) -> std::unique_ptr<FileText> {
    if (why_not) *why_not = reason;
    return nullptr;
  };
  CheckRelativePath(path);
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(root_fd, parent_path, O_PATH | O_DIRECTORY);
  struct stat st;
  if (!parent || fstatat(parent.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return refuse("is missing");
  if (!S_ISREG(st.st_mode)) return refuse("is not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_text_bytes) return refuse("is too large to be shown as text");
  std::unique_ptr<FileText> file = OpenRegularFile(parent.get(), name, shown.empty() ? path : shown);
  if (!file) return refuse(errno == EINVAL ? "is not a regular file" : std::string("cannot be read: ") + strerror(errno));
  // Its size is the one it has now, open: grown past the limit since the stat, it is refused.
  std::string reason = NotTextBecause(*file, max_text_bytes);
  if (!reason.empty()) return refuse(reason);
  return file;
}

std::optional<std::string> ReadTextFile(int root_fd, const std::string& path, size_t max_text_bytes, std::string* why_not) {
  std::unique_ptr<FileText> file = OpenTextFile(root_fd, path, max_text_bytes, why_not);
  if (!file) return std::nullopt;
  return ReadWhole(*file);
}

std::optional<TextFiles> OpenTextModification(int live_fd, int upper_fd, const std::string& path, uint64_t max_text_bytes,
                                              std::string* why_not) {
  std::string reason;
  TextFiles files;
  files.old_text = OpenTextFile(live_fd, path, max_text_bytes, &reason, "the live file");
  if (!files.old_text) {
    if (why_not) *why_not = "the live file " + reason;
    return std::nullopt;
  }
  files.new_text = OpenTextFile(upper_fd, path, max_text_bytes, &reason, "the sandbox's file");
  if (!files.new_text) {
    if (why_not) *why_not = "the sandbox's file " + reason;
    return std::nullopt;
  }
  return files;
}

std::optional<TextModification> ReadTextModification(int live_fd, int upper_fd, const std::string& path,
                                                     size_t max_text_bytes, std::string* why_not) {
  auto files = OpenTextModification(live_fd, upper_fd, path, max_text_bytes, why_not);
  if (!files) return std::nullopt;
  return TextModification{ReadWhole(*files->old_text), ReadWhole(*files->new_text)};
}

bool MayHaveHunks(const Change& change) {
  return change.kind == ChangeKind::kModified && change.old_type == EntryType::kFile && change.new_type == EntryType::kFile;
}

}  // namespace sandboxd
