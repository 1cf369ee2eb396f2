// Hostile input for the windowed way of ForEachHunk (text_hunks.h, change_finder.h), the way
// texts over 16 MiB go (a job writes one side, anyone with write access to the root the other),
// run here on small texts with tiny windows so that every cut, window growth, anchor search and
// fallback is reached. Input: one byte of context lines (mod 6), one of window lines (1 + b % 16),
// one of window bytes (8 + 4 b), one choosing hunks (hunk N is approved when bit (N - 1) % 8 is
// set), then the old text, a NUL byte and the new text. Beyond not crashing: every hunk's header,
// place and body agree with both texts, hunks come in order and do not overlap, texts differ
// exactly when they have hunks, approving every hunk gives the new text and none the old, and a
// merge of the chosen hunks gives old and new lines exactly where the hunks say.

#include <cstdio>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "check.h"
#include "text/hunk_merge.h"
#include "text/text_hunks.h"
#include "text/text_source.h"

namespace {

using sandboxd::HunkPlace;
using sandboxd::fuzz::Require;

struct Seen {
  std::string header, body;
  HunkPlace place;
};

class Collector final : public sandboxd::HunkSink {
 public:
  void Hunk(int number, std::string_view header, const HunkPlace& place) override {
    Require(number == static_cast<int>(hunks.size()) + 1, "hunks are numbered from 1 in order");
    hunks.push_back({std::string(header), "", place});
  }
  bool WantsBody(int) override { return true; }
  void Body(std::string_view piece) override { hunks.back().body.append(piece); }
  std::vector<Seen> hunks;
};

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t newline = text.find('\n', start);
    size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

/// "@@ -a,b +c,d @@ ..." with counts of 1 left out; false when it is not one.
bool ParseHeader(const std::string& header, long& a, long& b, long& c, long& d) {
  b = d = 1;
  if (sscanf(header.c_str(), "@@ -%ld,%ld +%ld,%ld @@", &a, &b, &c, &d) == 4) return true;
  b = d = 1;
  if (sscanf(header.c_str(), "@@ -%ld +%ld,%ld @@", &a, &c, &d) == 3) return true;
  b = d = 1;
  if (sscanf(header.c_str(), "@@ -%ld,%ld +%ld @@", &a, &b, &c) == 3) return true;
  b = d = 1;
  return sscanf(header.c_str(), "@@ -%ld +%ld @@", &a, &c) == 2;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  if (size < 4) return 0;
  int context = data[0] % 6;
  TextDiffLimits limits;
  limits.whole_bytes = 0;  // every non-empty text through windows
  limits.window_lines = 1 + data[1] % 16;
  limits.window_bytes = 8 + 4 * static_cast<size_t>(data[2]);
  limits.anchor_search_bytes = 64 + 16 * static_cast<uint64_t>(data[2]);
  limits.hunk_runs = 1 + data[1] % 5;
  unsigned mask = data[3];
  std::string_view rest(reinterpret_cast<const char*>(data) + 4, size - 4);
  size_t nul = rest.find('\0');
  std::string_view old_text = rest.substr(0, nul);
  std::string_view new_text = rest.substr(nul == std::string_view::npos ? rest.size() : nul + 1);
  MemoryText old_source(old_text), new_source(new_text);

  Collector collector;
  ForEachHunk(old_source, new_source, context, collector, limits);
  const auto& hunks = collector.hunks;
  Require(hunks.empty() == (old_text == new_text), "texts differ exactly when there are hunks");

  std::vector<std::string_view> old_lines = SplitLines(old_text), new_lines = SplitLines(new_text);
  std::vector<uint64_t> old_at{0}, new_at{0};
  for (auto line : old_lines) old_at.push_back(old_at.back() + line.size());
  for (auto line : new_lines) new_at.push_back(new_at.back() + line.size());
  size_t old_done = 0;
  for (const auto& hunk : hunks) {
    long a, b, c, d;
    Require(ParseHeader(hunk.header, a, b, c, d), "a hunk header reads @@ -a,b +c,d @@");
    Require(a >= 0 && b >= 0 && c >= 0 && d >= 0 && (b > 0 || d > 0), "a hunk covers lines");
    size_t o = static_cast<size_t>(b ? a - 1 : a), n = static_cast<size_t>(d ? c - 1 : c);
    Require(o >= old_done, "hunks come in order and do not overlap");
    Require(o + static_cast<size_t>(b) <= old_lines.size() && n + static_cast<size_t>(d) <= new_lines.size(),
            "a hunk lies inside both texts");
    Require(hunk.place.old_begin == old_at[o] && hunk.place.old_end == old_at[o + static_cast<size_t>(b)] &&
                hunk.place.new_begin == new_at[n] && hunk.place.new_end == new_at[n + static_cast<size_t>(d)],
            "a hunk's place is its header's lines");
    const size_t old_end = o + static_cast<size_t>(b), new_end = n + static_cast<size_t>(d);
    std::vector<std::string_view> body = SplitLines(hunk.body);
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i] == "\\ No newline at end of file\n") continue;
      Require(!body[i].empty() && (body[i][0] == ' ' || body[i][0] == '-' || body[i][0] == '+'), "body lines are ' ', '-', '+'");
      std::string content(body[i].substr(1));
      if (i + 1 < body.size() && body[i + 1] == "\\ No newline at end of file\n") content.pop_back();
      if (body[i][0] != '+') Require(o < old_end && content == old_lines[o++], "a ' ' or '-' line is the old text's");
      if (body[i][0] != '-') Require(n < new_end && content == new_lines[n++], "a ' ' or '+' line is the new text's");
    }
    Require(o == old_end && n == new_end, "a hunk's body has its header's counts");
    old_done = old_end;
  }

  std::set<int> all, chosen;
  for (int h = 1; h <= static_cast<int>(hunks.size()); ++h) {
    all.insert(h);
    if (mask & (1u << ((h - 1) % 8))) chosen.insert(h);
  }
  auto merge = [&](const std::set<int>& approved) {
    std::string merged;
    MergeHunks(old_source, new_source, approved, [&](std::string_view piece) { merged.append(piece); }, context, limits);
    return merged;
  };
  Require(merge(all) == new_text, "approving every hunk gives the new text");
  Require(merge({}) == old_text, "approving no hunk gives the old text");
  std::string expected;
  uint64_t done = 0;
  for (size_t h = 0; h < hunks.size(); ++h) {
    const HunkPlace& place = hunks[h].place;
    expected.append(old_text.substr(done, place.old_begin - done));
    expected.append(chosen.count(static_cast<int>(h + 1)) ? new_text.substr(place.new_begin, place.new_end - place.new_begin)
                                                          : old_text.substr(place.old_begin, place.old_end - place.old_begin));
    done = place.old_end;
  }
  expected.append(old_text.substr(done));
  Require(merge(chosen) == expected, "a merge takes the chosen hunks' new lines and the old text elsewhere");
  return 0;
}
