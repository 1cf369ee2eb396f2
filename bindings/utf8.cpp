#include "utf8.h"

#include "quote_path.h"

namespace sandboxd::api {
namespace {

/// The length of the valid UTF-8 sequence at `at`, or 0 when the byte there does not start one.
size_t ValidSequenceAt(std::string_view text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead == 0) return 0;
  if (lead < 0x80) return 1;
  size_t length;
  char32_t code;
  if ((lead & 0xe0) == 0xc0) length = 2, code = lead & 0x1f;
  else if ((lead & 0xf0) == 0xe0) length = 3, code = lead & 0x0f;
  else if ((lead & 0xf8) == 0xf0) length = 4, code = lead & 0x07;
  else return 0;
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  static constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kShortest[length] || code >= 0x110000) return 0;        // overlong, past Unicode
  if ((code & 0xfffff800) == 0xd800) return 0;                        // UTF-16 surrogates
  if ((code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) == 0xfffe) return 0;  // noncharacters
  return length;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    size_t length = ValidSequenceAt(text, at);
    if (length == 0) return false;
    at += length;
  }
  return true;
}

std::string EscapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    size_t length = ValidSequenceAt(text, at);
    if (length > 0) {
      out.append(text.substr(at, length));
      at += length;
      continue;
    }
    auto c = static_cast<unsigned char>(text[at++]);
    out += '\\';
    out += static_cast<char>('0' + (c >> 6));
    out += static_cast<char>('0' + ((c >> 3) & 7));
    out += static_cast<char>('0' + (c & 7));
  }
  return out;
}

std::string WireName(std::string_view path) {
  if (IsValidUtf8(path) && (path.empty() || path.front() != '"')) return std::string(path);
  return QuotePath(path);
}

std::optional<std::string> NameFromWire(std::string_view wire) {
  if (wire.empty() || wire.front() != '"') return std::string(wire);
  return UnquotePath(wire);
}

std::string ShowWireName(std::string_view wire) {
  auto name = NameFromWire(wire);
  return name ? QuotePath(*name) : QuotePath(wire);
}

std::string CutToBytes(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string tail = " ... (cut: " + std::to_string(text.size()) + " bytes in all)";
  size_t keep = max_bytes > tail.size() ? max_bytes - tail.size() : 0;
  // Back to the start of a character: continuation bytes are 10xxxxxx.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return std::string(text.substr(0, keep)) + tail;
}

}  // namespace sandboxd::api
