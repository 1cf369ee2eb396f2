#include "hunk_split.h"

#include <charconv>
#include <string_view>

namespace sandboxd::api {
namespace {

struct Line {
  char origin;       ///< ' ', '-', '+' or '\\' ("\ No newline at end of file")
  std::string text;  ///< the whole line with its origin and newline
};

/// "-a,b" or "+c,d" as diff writes it: ",1" left out, and a range of no lines starting at the
/// line before.
std::string Range(char sign, long first, long count) {
  std::string range = sign + std::to_string(count == 0 ? first - 1 : first);
  if (count != 1) range += "," + std::to_string(count);
  return range;
}

/// One number of a hunk header: digits only (no sign), at most kMostLines, so that counting
/// lines on from it cannot overflow. The header is read from the daemon, but a client does not
/// trust it to be well formed.
bool ReadNumber(std::string_view& text, long& number) {
  constexpr unsigned long kMostLines = 1UL << 40;  // far past any text sandboxd diffs
  unsigned long value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data() || value > kMostLines) return false;
  number = static_cast<long>(value);
  text.remove_prefix(end - text.data());
  return true;
}

/// "-a[,b]" or "+c[,d]": the first line of a side and how many lines it has (1 when left out).
bool ReadRange(std::string_view& text, char sign, long& first, long& count) {
  if (!text.starts_with(sign)) return false;
  text.remove_prefix(1);
  if (!ReadNumber(text, first)) return false;
  count = 1;
  if (!text.starts_with(',')) return true;
  text.remove_prefix(1);
  return ReadNumber(text, count);
}

/// "@@ -a[,b] +c[,d] @@", anything after (a function's name) ignored.
bool ReadHeader(std::string_view header, long& old_start, long& old_count, long& new_start, long& new_count) {
  if (!header.starts_with("@@ ")) return false;
  header.remove_prefix(3);
  if (!ReadRange(header, '-', old_start, old_count) || !header.starts_with(' ')) return false;
  header.remove_prefix(1);
  return ReadRange(header, '+', new_start, new_count) && header.starts_with(" @@");
}

}  // namespace

std::vector<std::string> SplitHunk(const std::string& hunk) {
  size_t body = hunk.find('\n');
  if (body == std::string::npos) return {hunk};
  long old_start = 0, old_count = 1, new_start = 0, new_count = 1;
  if (!ReadHeader(std::string_view(hunk).substr(0, body), old_start, old_count, new_start, new_count))
    return {hunk};
  // An empty range starts at the line before: make every start the first line of its side.
  if (old_count == 0) ++old_start;
  if (new_count == 0) ++new_start;

  std::vector<Line> lines;
  for (size_t at = body + 1; at < hunk.size();) {
    size_t end = hunk.find('\n', at);
    end = end == std::string::npos ? hunk.size() : end + 1;
    lines.push_back({hunk[at], hunk.substr(at, end - at)});
    at = end;
  }
  // Runs of changed lines: [begin, end) of `lines`, a "\" line going with the line before it.
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t i = 0; i < lines.size(); ++i) {
    bool changed = lines[i].origin == '-' || lines[i].origin == '+';
    bool follows = lines[i].origin == '\\' && !runs.empty() && runs.back().second == i;
    if (!changed && !follows) continue;
    if (!runs.empty() && runs.back().second == i) runs.back().second = i + 1;
    else runs.emplace_back(i, i + 1);
  }
  if (runs.size() <= 1) return {hunk};

  std::vector<std::string> parts;
  long old_line = old_start, new_line = new_start;  // of lines[0]
  size_t line_index = 0;
  auto advance = [&](size_t to) {  // old_line/new_line of lines[to]
    for (; line_index < to; ++line_index) {
      char origin = lines[line_index].origin;
      if (origin == ' ' || origin == '-') ++old_line;
      if (origin == ' ' || origin == '+') ++new_line;
    }
  };
  for (size_t r = 0; r < runs.size(); ++r) {
    // The unchanged lines since the run before, and up to the run after.
    size_t begin = r == 0 ? 0 : runs[r - 1].second;
    size_t end = r + 1 == runs.size() ? lines.size() : runs[r + 1].first;
    advance(begin);
    long old_first = old_line, new_first = new_line, olds = 0, news = 0;
    std::string text;
    for (size_t i = begin; i < end; ++i) {
      char origin = lines[i].origin;
      olds += origin == ' ' || origin == '-';
      news += origin == ' ' || origin == '+';
      text += lines[i].text;
    }
    parts.push_back("@@ " + Range('-', old_first, olds) + " " + Range('+', new_first, news) + " @@\n" + text);
  }
  return parts;
}

}  // namespace sandboxd::api
