#include "visible_bytes.h"

namespace sandboxctl {
namespace {

/// The code point of the well-formed UTF-8 sequence at `at` and its length; length 0 when the
/// byte there starts none (a stray continuation byte, an overlong form, a surrogate, a sequence
/// cut short or past U+10FFFF).
struct Decoded {
  char32_t code = 0;
  size_t length = 0;
};
Decoded DecodeAt(std::string_view text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  size_t length;
  char32_t code;
  if (lead < 0x80) return {lead, 1};
  if ((lead & 0xe0) == 0xc0) length = 2, code = lead & 0x1f;
  else if ((lead & 0xf0) == 0xe0) length = 3, code = lead & 0x0f;
  else if ((lead & 0xf8) == 0xf0) length = 4, code = lead & 0x07;
  else return {};
  if (at + length > text.size()) return {};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return {};
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  static constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kShortest[length] || code >= 0x110000 || (code & 0xfffff800) == 0xd800) return {};
  return {code, length};
}

/// C1 controls, and the bidirectional controls that reorder the text around them.
bool IsHiddenControl(char32_t code) {
  return (code >= 0x80 && code <= 0x9f) || code == 0x061c || code == 0x200e || code == 0x200f ||
         (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

constexpr char kHex[] = "0123456789ABCDEF";

}  // namespace

std::string VisibleBytes(std::string_view line, VisibleMarks marks) {
  std::string out;
  out.reserve(line.size());
  auto mark = [&](std::string_view shown) {
    out += marks.on;
    out += shown;
    out += marks.off;
  };
  for (size_t at = 0; at < line.size();) {
    auto c = static_cast<unsigned char>(line[at]);
    if (c == '\t' || (c >= 0x20 && c < 0x7f)) {
      out += static_cast<char>(c);
      ++at;
    } else if (c < 0x20 || c == 0x7f) {
      // ^@ .. ^_ and ^?, as cat -v: the byte that a terminal would obey (NUL, CR, ESC, ...).
      const char shown[] = {'^', static_cast<char>(c == 0x7f ? '?' : c + 0x40)};
      mark({shown, 2});
      ++at;
    } else if (Decoded decoded = DecodeAt(line, at); decoded.length == 0) {
      const char shown[] = {'<', kHex[c >> 4], kHex[c & 15], '>'};
      mark({shown, 4});
      ++at;
    } else if (IsHiddenControl(decoded.code)) {
      std::string shown = "<U+";
      for (int shift = 12; shift >= 0; shift -= 4) shown += kHex[(decoded.code >> shift) & 15];
      mark(shown + ">");
      at += decoded.length;
    } else {
      out.append(line.substr(at, decoded.length));
      at += decoded.length;
    }
  }
  return out;
}

}  // namespace sandboxctl
