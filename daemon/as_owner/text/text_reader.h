#pragma once
/// TextReader: walks over the lines of a TextSource, forwards or backwards, through one cached
/// block, so that a walk over neighbouring lines costs one read per block, not one per line, and
/// never holds more than a block of a file. A text in memory is used in place. Lines are as
/// libgit2 cuts them: each ends after its '\n', the last one may end at the end of the text.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "text/text_source.h"

namespace sandboxd {

class TextReader {
 public:
  static constexpr size_t kBlockBytes = 64 * 1024;

  explicit TextReader(const TextSource& source, size_t block_bytes = kBlockBytes);
  TextReader(const TextReader&) = delete;
  TextReader& operator=(const TextReader&) = delete;

  uint64_t size() const { return size_; }
  /// Bytes from `offset` on, at least one when offset < size; valid until the next call.
  std::string_view From(uint64_t offset);
  /// Bytes ending at `offset`, at least one when offset > 0; valid until the next call.
  std::string_view Before(uint64_t offset);
  /// Bytes [begin, end) as a string: only for ranges known to be small.
  std::string Copy(uint64_t begin, uint64_t end);

  /// The first '\n' in [from, end), or `end` when there is none.
  uint64_t FindNewline(uint64_t from, uint64_t end);
  /// The last '\n' in [begin, before), or nullopt.
  std::optional<uint64_t> FindNewlineBefore(uint64_t begin, uint64_t before);
  /// How many '\n' bytes [begin, end) holds.
  uint64_t CountNewlines(uint64_t begin, uint64_t end);

  /// Where the line that starts at `line_begin` ends (after its '\n', or at the end of the text).
  uint64_t LineEnd(uint64_t line_begin) { return std::min(FindNewline(line_begin, size_) + 1, size_); }
  /// How many lines [begin, end) holds (begin a line start; end a line start or the text's end).
  uint64_t CountLines(uint64_t begin, uint64_t end);

  struct Lines {
    uint64_t offset = 0;  ///< where the walk stopped (a line start, or the end of the text)
    uint64_t count = 0;   ///< lines walked over
  };
  /// From line start `offset` back over at most `count` lines (fewer at the start of the text).
  Lines BackOver(uint64_t offset, uint64_t count);
  /// From line start `offset` forward over at most `count` lines (fewer at the end of the text).
  Lines ForwardOver(uint64_t offset, uint64_t count);

 private:
  /// Makes the block hold `offset` (reading [begin, begin + block) around it).
  void Load(uint64_t begin);

  const TextSource& source_;
  const uint64_t size_;
  std::optional<std::string_view> memory_;
  std::string block_;
  uint64_t block_begin_ = 0;
  size_t block_used_ = 0;
};

}  // namespace sandboxd
