#include "model_names.h"

#include <cstdio>

namespace sandboxd::model {

std::string ShellWord(const std::string& bytes) {
  std::string out = "\"$(printf '";
  for (unsigned char c : bytes) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/' || c == '_' ||
                 c == '-' || c == ' ' || c == '+' || c == ',' || c == ':' || c == '=';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char oct[8];
      std::snprintf(oct, sizeof oct, "\\%03o", c);
      out += oct;
    }
  }
  // printf's format must not start with '-' (it would read it as an option).
  if (out.compare(0, 11, "\"$(printf '") == 0 && !bytes.empty() && bytes[0] == '-') out.insert(10, "-- ");
  return out + "')\"";
}

std::string PrintfFormat(const std::string& bytes) {
  std::string out = "'";
  for (unsigned char c : bytes) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == ' ' || c == '_' || c == '-';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char oct[8];
      std::snprintf(oct, sizeof oct, "\\%03o", c);
      out += oct;
    }
  }
  return out + "'";
}

namespace {
/// Length of the valid UTF-8 sequence at `i`, 0 if none.
size_t Utf8Length(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return 0;
  if (n == 2 && c < 0xc2) return 0;  // overlong
  return n;
}
}  // namespace

bool IsUtf8(const std::string& bytes) {
  for (size_t i = 0; i < bytes.size();) {
    size_t n = Utf8Length(bytes, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string GitQuote(const std::string& name, bool octal_high) {
  std::string body;
  bool quote = false;
  for (size_t i = 0; i < name.size();) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    size_t n = Utf8Length(name, i);
    if (c >= 0x80 && n > 0 && !octal_high) {
      body.append(name, i, n);
      i += n;
      continue;
    }
    const char* named = nullptr;
    switch (c) {
      case '\a': named = "\\a"; break;
      case '\b': named = "\\b"; break;
      case '\t': named = "\\t"; break;
      case '\n': named = "\\n"; break;
      case '\v': named = "\\v"; break;
      case '\f': named = "\\f"; break;
      case '\r': named = "\\r"; break;
      case '"': named = "\\\""; break;
      case '\\': named = "\\\\"; break;
      default: break;
    }
    if (named) {
      body += named;
      quote = true;
    } else if (c < 0x20 || c == 0x7f || c >= 0x80) {
      char oct[8];
      std::snprintf(oct, sizeof oct, "\\%03o", c);
      body += oct;
      quote = true;
    } else {
      body += static_cast<char>(c);
    }
    ++i;
  }
  return quote ? "\"" + body + "\"" : body;
}

std::string WireName(const std::string& name) {
  return IsUtf8(name) && (name.empty() || name[0] != '"') ? name : GitQuote(name, true);
}

bool HasRawControlBytes(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return true;
  return false;
}

std::string Printable(const std::string& bytes, size_t limit) {
  std::string out;
  for (unsigned char c : bytes) {
    if (out.size() >= limit) return out + "...";
    if (c == '\n') out += "\\n";
    else if (c == '\\') out += "\\\\";
    else if (c < 0x20 || c >= 0x7f) {
      char oct[8];
      std::snprintf(oct, sizeof oct, "\\%03o", c);
      out += oct;
    } else out += static_cast<char>(c);
  }
  return out;
}

}  // namespace sandboxd::model
