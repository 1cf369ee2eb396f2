#include "text/common_lines.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace sandboxd {
namespace {

/// How many leading bytes `a` and `b` (of one length) have in common.
size_t CommonHead(std::string_view a, std::string_view b) {
  if (memcmp(a.data(), b.data(), a.size()) == 0) return a.size();
  return static_cast<size_t>(std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin());
}

/// How many trailing bytes `a` and `b` (of one length) have in common.
size_t CommonTail(std::string_view a, std::string_view b) {
  if (memcmp(a.data(), b.data(), a.size()) == 0) return a.size();
  return static_cast<size_t>(std::mismatch(a.rbegin(), a.rend(), b.rbegin()).first - a.rbegin());
}

}  // namespace

SkippedLines CommonLinesAhead(TextReader& old_text, uint64_t old_at, uint64_t old_stop, TextReader& new_text,
                              uint64_t new_at, uint64_t new_stop) {
  const uint64_t limit = std::min(old_stop - old_at, new_stop - new_at);
  uint64_t equal = 0;
  SkippedLines skipped;
  while (equal < limit) {
    std::string_view a = old_text.From(old_at + equal), b = new_text.From(new_at + equal);
    size_t length = static_cast<size_t>(std::min<uint64_t>({a.size(), b.size(), limit - equal}));
    size_t same = CommonHead(a.substr(0, length), b.substr(0, length));
    std::string_view piece = a.substr(0, same);
    // Only whole lines count: what follows the last '\n' of the equal bytes may still differ.
    if (const void* last = memrchr(piece.data(), '\n', piece.size())) {
      skipped.lines += static_cast<uint64_t>(std::count(piece.begin(), piece.end(), '\n'));
      skipped.bytes = equal + static_cast<uint64_t>(static_cast<const char*>(last) - piece.data()) + 1;
    }
    equal += same;
    if (same < length) break;
  }
  return skipped;
}

uint64_t CommonTailBytes(TextReader& old_text, uint64_t old_from, TextReader& new_text, uint64_t new_from) {
  const uint64_t old_size = old_text.size(), new_size = new_text.size();
  const uint64_t limit = std::min(old_size - old_from, new_size - new_from);
  uint64_t common = 0;
  while (common < limit) {
    std::string_view a = old_text.Before(old_size - common), b = new_text.Before(new_size - common);
    size_t length = static_cast<size_t>(std::min<uint64_t>({a.size(), b.size(), limit - common}));
    size_t same = CommonTail(a.substr(a.size() - length), b.substr(b.size() - length));
    common += same;
    if (same < length) break;
  }
  // The suffix must start a line in both texts: right after a '\n', or where the part looked
  // at begins (itself a line start).
  auto starts_line = [](TextReader& text, uint64_t at, uint64_t from) { return at == from || text.Before(at).back() == '\n'; };
  if (common == 0 || (starts_line(old_text, old_size - common, old_from) && starts_line(new_text, new_size - common, new_from)))
    return common;
  // Otherwise it starts after the first '\n' inside the common bytes, the same byte in both.
  uint64_t newline = old_text.FindNewline(old_size - common, old_size);
  return newline == old_size ? 0 : old_size - (newline + 1);
}

bool SameText(const TextSource& a, const TextSource& b) {
  if (a.size() != b.size()) return false;
  TextReader left(a), right(b);
  for (uint64_t at = 0; at < a.size();) {
    std::string_view x = left.From(at), y = right.From(at);
    size_t length = std::min(x.size(), y.size());
    if (memcmp(x.data(), y.data(), length) != 0) return false;
    at += length;
  }
  return true;
}

}  // namespace sandboxd
