#include "display_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "harness.h"
#include "visible_bytes.h"

namespace sandboxd::display {
namespace {

/// The code point of the UTF-8 sequence at `at` and its length; length 0 when none starts
/// there. Written apart from visible_bytes.cpp's, so that it checks that rather than repeats it.
std::pair<char32_t, size_t> Utf8At(const std::string& text, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(at);
  if (lead < 0x80) return {lead, 1};
  size_t length = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? (lead <= 0xef ? 3 : 0) : lead >= 0xc2 ? 2 : 0;
  if (length == 0 || at + length > text.size()) return {0, 0};
  char32_t code = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return {0, 0};
    code = (code << 6) | (byte(at + i) & 0x3f);
  }
  static constexpr char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kShortest[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return {0, 0};
  return {code, length};
}

/// What in `rendered` could still steer a terminal, or "".
std::string Steering(const std::string& rendered) {
  for (size_t at = 0; at < rendered.size();) {
    auto c = static_cast<unsigned char>(rendered[at]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return "a raw control byte \\" + std::to_string(c / 64) + std::to_string(c / 8 % 8) + std::to_string(c % 8);
    auto [code, length] = Utf8At(rendered, at);
    if (length == 0) return "a byte that is not UTF-8";
    bool c1 = code >= 0x80 && code <= 0x9f;
    bool bidi = code == 0x061c || code == 0x200e || code == 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
    if (c1 || bidi) return c1 ? "a raw C1 control" : "a raw bidirectional control";
    at += length;
  }
  return "";
}

}  // namespace

GitView ViewAsGit(const std::string& dir) {
  GitView view;
  for (const auto& [path, value] : it::Snapshot(dir)) {
    char* end = nullptr;
    auto mode = static_cast<mode_t>(std::strtoul(value.c_str(), &end, 8));
    if (path == "." || S_ISDIR(mode) || path == "/.git" || path.starts_with("/.git/")) continue;
    std::string kept = S_ISREG(mode) ? ((mode & S_IXUSR) ? "100755" : "100644") : S_ISLNK(mode) ? "120000" : "other " + value.substr(0, end - value.c_str());
    view[path] = kept + value.substr(static_cast<size_t>(end - value.c_str()));
  }
  return view;
}

std::string DescribeDifferences(const GitView& committed, const GitView& patched) {
  std::set<std::string> paths;
  for (const auto* view : {&committed, &patched})
    for (const auto& [path, value] : *view) paths.insert(path);
  std::string text;
  size_t differing = 0;
  for (const auto& path : paths) {
    auto in_committed = committed.find(path), in_patched = patched.find(path);
    bool both = in_committed != committed.end() && in_patched != patched.end();
    if (both && in_committed->second == in_patched->second) continue;
    if (++differing > 12) continue;
    auto side = [&](const GitView& view, const GitView::const_iterator& found, size_t from) {
      if (found == view.end()) return std::string("(none)");
      return "\"" + Shown(found->second.substr(from, 100), 100) + "\"" + (found->second.size() > from + 100 ? "..." : "");
    };
    size_t from = 0;
    if (both) {
      const std::string &a = in_committed->second, &b = in_patched->second;
      size_t part = std::mismatch(a.begin(), a.begin() + static_cast<long>(std::min(a.size(), b.size())), b.begin()).first - a.begin();
      from = part > 40 ? part - 40 : 0;
    }
    text += Shown(path, 200) + (from > 0 ? " (from byte " + std::to_string(from) + ")" : std::string()) + ": committed " +
            side(committed, in_committed, from) + "; patched " + side(patched, in_patched, from) + "\n";
  }
  if (differing > 12) text += "... " + std::to_string(differing - 12) + " more paths differ\n";
  return text;
}

std::vector<std::string> HunksOf(const std::string& diff) {
  std::vector<std::string> hunks;
  bool in_hunk = false;
  for (size_t at = 0; at < diff.size();) {
    size_t end = diff.find('\n', at);
    end = end == std::string::npos ? diff.size() : end + 1;
    std::string_view line(diff.data() + at, end - at);
    if (line.starts_with("@@ ")) {
      hunks.emplace_back(line);
      in_hunk = true;
    } else if (line.starts_with("diff --git ")) {
      in_hunk = false;
    } else if (in_hunk) {
      hunks.back().append(line);
    }
    at = end;
  }
  return hunks;
}

std::string TerminalLeaks(const std::string& diff) {
  std::string leaks;
  for (const std::string& hunk : HunksOf(diff)) {
    size_t at = hunk.find('\n') + 1;  // past the "@@" line
    while (at > 0 && at < hunk.size()) {
      size_t end = hunk.find('\n', at);
      std::string line = hunk.substr(at, (end == std::string::npos ? hunk.size() : end) - at);
      at = end == std::string::npos ? 0 : end + 1;
      if (line.empty() || (line[0] != ' ' && line[0] != '+' && line[0] != '-')) continue;
      std::string rendered = sandboxctl::VisibleBytes(line, {.on = "", .off = ""});
      std::string why = Steering(rendered);
      if (why.empty() && rendered.size() < line.size()) why = "fewer bytes than the line has";
      if (!why.empty()) leaks += why + " in " + Shown(rendered, 200) + " (the line: " + Shown(line, 200) + ")\n";
    }
  }
  return leaks;
}

std::string Shown(const std::string& bytes, size_t limit) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == limit) return out + "... (" + std::to_string(bytes.size()) + " bytes in all)";
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n' || (c >= 0x20 && c < 0x7f && c != '\\')) {
      out += static_cast<char>(c);
    } else {
      char octal[8];
      std::snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
    }
  }
  return out;
}

}  // namespace sandboxd::display
