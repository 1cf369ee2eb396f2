#include "text/hunk_header.h"

#include <algorithm>

namespace sandboxd {
namespace {

constexpr size_t kContextBytes = 80;  // xemit.c's struct func_line
constexpr size_t kHeaderBytes = 127;  // what libgit2 keeps of a header (GIT_DIFF_HUNK_HEADER_SIZE - 1)

bool StartsFunction(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '\v'; }

/// libgit2's utf8_charlen: the length of the UTF-8 sequence at the start of `text`, 0 if none.
size_t Utf8Length(std::string_view text) {
  auto lead = static_cast<unsigned char>(text[0]);
  size_t length = lead < 0x80 ? 1 : lead < 0xC0 ? 0 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : lead < 0xF8 ? 4 : 0;
  if (length == 0 || length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) return 0;
  return length;
}

std::string Range(uint64_t first, uint64_t count) {
  std::string text = std::to_string(count == 0 ? first : first + 1);
  if (count != 1) text += "," + std::to_string(count);
  return text;
}

}  // namespace

std::string FormatHunkHeader(uint64_t old_first, uint64_t old_count, uint64_t new_first, uint64_t new_count,
                             std::string_view context) {
  std::string header = "@@ -" + Range(old_first, old_count) + " +" + Range(new_first, new_count) + " @@";
  if (context.empty()) return header;
  // xdl_format_hunk_hdr fills at most 128 bytes, its newline included; libgit2 keeps 127.
  header += ' ';
  header.append(context.substr(0, std::min(context.size(), kHeaderBytes - header.size())));
  header.resize(std::min(header.size(), kHeaderBytes));
  size_t valid = 0;
  while (valid < header.size()) {
    size_t length = Utf8Length(std::string_view(header).substr(valid));
    if (length == 0) break;
    valid += length;
  }
  header.resize(valid);
  return header;
}

const std::string& FunctionLines::Before(uint64_t line_begin) {
  uint64_t end = line_begin;  // the lines before `end`, nearest first
  while (end > searched_) {
    auto newline = reader_.FindNewlineBefore(searched_, end - 1);
    uint64_t begin = newline ? *newline + 1 : searched_;
    if (StartsFunction(reader_.From(begin)[0])) {
      // Trailing whitespace goes before the cut to 80 bytes (diff_context_find), so look for the
      // line's last other byte first.
      uint64_t last = end;
      while (last > begin && IsSpace(reader_.Before(last).back())) --last;
      found_ = reader_.Copy(begin, std::min(last, begin + kContextBytes));
      break;
    }
    end = begin;
  }
  searched_ = std::max(searched_, line_begin);
  return found_;
}

}  // namespace sandboxd
