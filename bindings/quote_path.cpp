#include "quote_path.h"

namespace sandboxd::api {
namespace {

bool NeedsQuoting(unsigned char c) { return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f; }

/// The letter of C's escape for `c` (\n → 'n'), or 0 when it has none.
char EscapeLetter(unsigned char c) {
  switch (c) {
    case '\a': return 'a';
    case '\b': return 'b';
    case '\t': return 't';
    case '\n': return 'n';
    case '\v': return 'v';
    case '\f': return 'f';
    case '\r': return 'r';
    case '"': return '"';
    case '\\': return '\\';
    default: return 0;
  }
}

void AppendOctal(std::string& out, unsigned char c) {
  out += '\\';
  out += static_cast<char>('0' + ((c >> 6) & 7));
  out += static_cast<char>('0' + ((c >> 3) & 7));
  out += static_cast<char>('0' + (c & 7));
}

}  // namespace

std::string QuotePath(std::string_view path) {
  bool needed = false;
  for (unsigned char c : path) needed = needed || NeedsQuoting(c);
  if (!needed) return std::string(path);
  std::string out = "\"";
  for (unsigned char c : path) {
    if (!NeedsQuoting(c)) {
      out += static_cast<char>(c);
    } else if (char letter = EscapeLetter(c)) {
      out += '\\';
      out += letter;
    } else {
      AppendOctal(out, c);
    }
  }
  return out + "\"";
}

std::optional<std::string> UnquotePath(std::string_view token) {
  if (token.empty() || token.front() != '"') return std::string(token);
  if (token.size() < 2 || token.back() != '"') return std::nullopt;
  std::string_view inner = token.substr(1, token.size() - 2);
  static constexpr std::string_view kLetters = "abtnvfr\"\\", kBytes = "\a\b\t\n\v\f\r\"\\";
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '"') return std::nullopt;
    if (inner[i] != '\\') {
      out += inner[i];
      continue;
    }
    if (i + 1 >= inner.size()) return std::nullopt;
    char e = inner[++i];
    if (size_t at = kLetters.find(e); at != std::string_view::npos) {
      out += kBytes[at];
    } else if (i + 2 < inner.size() && e >= '0' && e <= '3' && octal(inner[i + 1]) && octal(inner[i + 2])) {
      out += static_cast<char>(((e - '0') << 6) | ((inner[i + 1] - '0') << 3) | (inner[i + 2] - '0'));
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::string EscapeControlBytes(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      AppendOctal(out, c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace sandboxd::api
