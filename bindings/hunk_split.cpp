#include "hunk_split.h"

#include <charconv>
#include <set>
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

/// A hunk read into its lines and the runs of changed lines among them.
struct ReadHunk {
  bool read = false;  ///< false: no header that can be read (the hunk is one part)
  long old_start = 0, new_start = 0;
  std::vector<Line> lines;
  std::vector<std::pair<size_t, size_t>> runs;  ///< [begin, end) of `lines`
};

ReadHunk Read(const std::string& hunk) {
  ReadHunk read;
  size_t body = hunk.find('\n');
  if (body == std::string::npos) return read;
  long old_count = 1, new_count = 1;
  if (!ReadHeader(std::string_view(hunk).substr(0, body), read.old_start, old_count, read.new_start, new_count)) return read;
  read.read = true;
  // An empty range starts at the line before: make every start the first line of its side.
  if (old_count == 0) ++read.old_start;
  if (new_count == 0) ++read.new_start;
  for (size_t at = body + 1; at < hunk.size();) {
    size_t end = hunk.find('\n', at);
    end = end == std::string::npos ? hunk.size() : end + 1;
    read.lines.push_back({hunk[at], hunk.substr(at, end - at)});
    at = end;
  }
  // Runs of changed lines, a "\" line going with the line before it.
  for (size_t i = 0; i < read.lines.size(); ++i) {
    bool changed = read.lines[i].origin == '-' || read.lines[i].origin == '+';
    bool follows = read.lines[i].origin == '\\' && !read.runs.empty() && read.runs.back().second == i;
    if (!changed && !follows) continue;
    if (!read.runs.empty() && read.runs.back().second == i) read.runs.back().second = i + 1;
    else read.runs.emplace_back(i, i + 1);
  }
  return read;
}

/// Parts `first` to `last` (from 0) of `hunk` as one hunk: their runs with the unchanged lines
/// from the run before the first to the run after the last.
std::string Joined(const ReadHunk& hunk, size_t first, size_t last) {
  size_t begin = first == 0 ? 0 : hunk.runs[first - 1].second;
  size_t end = last + 1 == hunk.runs.size() ? hunk.lines.size() : hunk.runs[last + 1].first;
  long old_first = hunk.old_start, new_first = hunk.new_start, olds = 0, news = 0;
  for (size_t i = 0; i < begin; ++i) {
    char origin = hunk.lines[i].origin;
    old_first += origin == ' ' || origin == '-';
    new_first += origin == ' ' || origin == '+';
  }
  std::string text;
  for (size_t i = begin; i < end; ++i) {
    char origin = hunk.lines[i].origin;
    olds += origin == ' ' || origin == '-';
    news += origin == ' ' || origin == '+';
    text += hunk.lines[i].text;
  }
  return "@@ " + Range('-', old_first, olds) + " " + Range('+', new_first, news) + " @@\n" + text;
}

}  // namespace

std::vector<std::string> SplitHunk(const std::string& hunk) {
  ReadHunk read = Read(hunk);
  if (!read.read || read.runs.size() <= 1) return {hunk};
  std::vector<std::string> parts;
  for (size_t r = 0; r < read.runs.size(); ++r) parts.push_back(Joined(read, r, r));
  return parts;
}

std::vector<std::string> AskedParts(const std::string& hunk, const std::set<int>& asked) {
  ReadHunk read = Read(hunk);
  if (!read.read || read.runs.size() <= 1) return asked.count(1) ? std::vector<std::string>{hunk} : std::vector<std::string>{};
  std::vector<std::string> parts;
  for (size_t r = 0; r < read.runs.size(); ++r) {
    if (!asked.count(static_cast<int>(r + 1))) continue;
    size_t last = r;
    while (last + 1 < read.runs.size() && asked.count(static_cast<int>(last + 2))) ++last;
    parts.push_back(Joined(read, r, last));
    r = last;
  }
  return parts;
}

}  // namespace sandboxd::api
