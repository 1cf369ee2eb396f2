#pragma once
/// TextSource: the bytes of one side of a text diff, read by offset, so that a diff, a hunk
/// count or a merge of a file of any size needs only the pieces it looks at in memory. A string
/// already in memory (a symlink's target, a test's text) or a file read with pread. Never a
/// mapping: a file that shrinks under a mapping kills its reader with SIGBUS, and the files
/// diffed are the owner's and a job's, which either may be writing while we read.

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "unique_fd.h"

namespace sandboxd {

class TextSource {
 public:
  virtual ~TextSource() = default;
  virtual uint64_t size() const = 0;
  /// Copies bytes [offset, offset + length) into `out`. Throws Error(kFailed) when they are not
  /// there any more (a file that shrank since it was opened).
  virtual void Read(uint64_t offset, size_t length, char* out) const = 0;
  /// The whole text when it is in memory already, so that readers can skip the copy.
  virtual std::optional<std::string_view> InMemory() const { return std::nullopt; }
};

/// A text in memory that someone else owns and keeps alive.
class MemoryText final : public TextSource {
 public:
  explicit MemoryText(std::string_view text) : text_(text) {}
  uint64_t size() const override { return text_.size(); }
  void Read(uint64_t offset, size_t length, char* out) const override;
  std::optional<std::string_view> InMemory() const override { return text_; }

 private:
  std::string_view text_;
};

/// A text in memory that this object owns (a symlink's target).
class StringText final : public TextSource {
 public:
  explicit StringText(std::string text) : text_(std::move(text)) {}
  uint64_t size() const override { return text_.size(); }
  void Read(uint64_t offset, size_t length, char* out) const override;
  std::optional<std::string_view> InMemory() const override { return std::string_view(text_); }

 private:
  std::string text_;
};

/// A regular file, read with pread. Its size is the one it had when opened: bytes a writer
/// appends later are not read (as if the file had been read whole at that moment), bytes it
/// takes away make Read throw, and CheckUnchanged tells whether anything changed at all.
class FileText final : public TextSource {
 public:
  /// Takes `fd`, a regular file open for reading whose fstat is `st`; `name` names it in errors.
  FileText(UniqueFd fd, const struct stat& st, std::string name);
  uint64_t size() const override { return size_; }
  void Read(uint64_t offset, size_t length, char* out) const override;
  /// Throws Error(kFailed) naming the file when its size, modification or change time is not
  /// what it was when opened: what was read of it may mix two versions.
  void CheckUnchanged() const;
  const std::string& name() const { return name_; }

 private:
  UniqueFd fd_;
  uint64_t size_;
  struct timespec mtime_, ctime_;
  std::string name_;
};

}  // namespace sandboxd
