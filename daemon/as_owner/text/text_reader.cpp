#include "text/text_reader.h"

#include <algorithm>
#include <cstring>

namespace sandboxd {

TextReader::TextReader(const TextSource& source, size_t block_bytes)
    : source_(source), size_(source.size()), memory_(source.InMemory()) {
  if (!memory_) block_.resize(block_bytes);
}

void TextReader::Load(uint64_t begin) {
  block_begin_ = begin;
  block_used_ = static_cast<size_t>(std::min<uint64_t>(block_.size(), size_ - begin));
  source_.Read(begin, block_used_, block_.data());
}

std::string_view TextReader::From(uint64_t offset) {
  if (offset >= size_) return {};
  if (memory_) return memory_->substr(offset);
  if (offset < block_begin_ || offset >= block_begin_ + block_used_) Load(offset);
  return std::string_view(block_.data() + (offset - block_begin_), block_used_ - (offset - block_begin_));
}

std::string_view TextReader::Before(uint64_t offset) {
  offset = std::min(offset, size_);
  if (offset == 0) return {};
  if (memory_) return memory_->substr(0, offset);
  if (offset <= block_begin_ || offset > block_begin_ + block_used_) Load(offset > block_.size() ? offset - block_.size() : 0);
  return std::string_view(block_.data(), offset - block_begin_);
}

std::string TextReader::Copy(uint64_t begin, uint64_t end) {
  std::string out;
  out.reserve(end - begin);
  while (begin < end) {
    std::string_view piece = From(begin);
    piece = piece.substr(0, std::min<uint64_t>(piece.size(), end - begin));
    out.append(piece);
    begin += piece.size();
  }
  return out;
}

uint64_t TextReader::FindNewline(uint64_t from, uint64_t end) {
  end = std::min(end, size_);
  while (from < end) {
    std::string_view piece = From(from);
    piece = piece.substr(0, std::min<uint64_t>(piece.size(), end - from));
    if (const void* newline = memchr(piece.data(), '\n', piece.size()))
      return from + static_cast<uint64_t>(static_cast<const char*>(newline) - piece.data());
    from += piece.size();
  }
  return end;
}

std::optional<uint64_t> TextReader::FindNewlineBefore(uint64_t begin, uint64_t before) {
  before = std::min(before, size_);
  while (before > begin) {
    std::string_view piece = Before(before);
    if (piece.size() > before - begin) piece.remove_prefix(piece.size() - (before - begin));
    if (const void* newline = memrchr(piece.data(), '\n', piece.size()))
      return before - piece.size() + static_cast<uint64_t>(static_cast<const char*>(newline) - piece.data());
    before -= piece.size();
  }
  return std::nullopt;
}

uint64_t TextReader::CountNewlines(uint64_t begin, uint64_t end) {
  end = std::min(end, size_);
  uint64_t count = 0;
  while (begin < end) {
    std::string_view piece = From(begin);
    piece = piece.substr(0, std::min<uint64_t>(piece.size(), end - begin));
    count += static_cast<uint64_t>(std::count(piece.begin(), piece.end(), '\n'));
    begin += piece.size();
  }
  return count;
}

uint64_t TextReader::CountLines(uint64_t begin, uint64_t end) {
  if (end <= begin) return 0;
  uint64_t count = CountNewlines(begin, end);
  return Before(end).back() == '\n' ? count : count + 1;  // an unterminated last line
}

TextReader::Lines TextReader::BackOver(uint64_t offset, uint64_t count) {
  Lines walked{offset, 0};
  while (walked.count < count && walked.offset > 0) {
    // The line ending at `offset` has its '\n' at offset - 1; it starts after the one before.
    auto newline = FindNewlineBefore(0, walked.offset - 1);
    walked.offset = newline ? *newline + 1 : 0;
    ++walked.count;
  }
  return walked;
}

TextReader::Lines TextReader::ForwardOver(uint64_t offset, uint64_t count) {
  Lines walked{offset, 0};
  while (walked.count < count && walked.offset < size_) {
    walked.offset = LineEnd(walked.offset);
    ++walked.count;
  }
  return walked;
}

}  // namespace sandboxd
