#include "text/change_finder.h"

#include <string.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "text/common_lines.h"
#include "text/text_patch.h"
#include "text/text_reader.h"

namespace sandboxd {
namespace {

/// The first lines of a window that stand for it when it is looked for in the other text: at
/// least this many lines and bytes (a lone "}" or blank line would be found anywhere), at most
/// kAnchorMaxLines.
constexpr uint64_t kAnchorMinLines = 8;
constexpr uint64_t kAnchorMinBytes = 128;
constexpr uint64_t kAnchorMaxLines = 64;
/// How much of the other text one read of the anchor search takes.
constexpr size_t kSearchBlock = size_t{1} << 20;
/// The first window a side (ChangeFinder::Step).
constexpr size_t kFirstWindowBytes = size_t{64} << 10;
constexpr size_t kFirstWindowLines = 1024;

/// Whole lines of one side from a line start: what one libgit2 call sees of that side.
struct Window {
  std::string text;
  std::vector<uint32_t> starts;  ///< where each line starts in `text`, then text.size()
  bool final = false;            ///< it holds every line up to the side's stop
  uint64_t lines() const { return starts.size() - 1; }
  /// How many of its lines, counted from the end, may be artefacts of where it was cut.
  uint64_t Untrusted() const { return final ? 0 : std::max<uint64_t>(1, lines() / 4); }
  bool EndsAt(uint64_t line) const { return line == lines() && !final; }
};

Window ReadWindow(const TextSource& source, uint64_t at, uint64_t stop, size_t max_bytes, size_t max_lines) {
  Window window;
  uint64_t length = std::min<uint64_t>(max_bytes, stop - at);
  window.text.resize(static_cast<size_t>(length));
  source.Read(at, window.text.size(), window.text.data());
  window.final = at + length == stop;
  window.starts.push_back(0);
  size_t end = 0;  // the end of the last whole line taken
  while (end < window.text.size() && window.lines() < max_lines) {
    size_t newline = window.text.find('\n', end);
    if (newline == std::string::npos) {
      if (window.final) end = window.text.size();  // the text's last line, without '\n'
      else break;                                   // cut off by the window: not taken
    } else {
      end = newline + 1;
    }
    window.starts.push_back(static_cast<uint32_t>(end));
  }
  if (end < window.text.size()) {
    window.text.resize(end);
    window.final = false;
  }
  return window;
}

class ChangeFinder {
 public:
  ChangeFinder(const TextSource& old_text, const TextSource& new_text, const TextDiffLimits& limits,
               const std::function<void(const LineChange&)>& emit)
      : old_source_(old_text), new_source_(new_text), old_(old_text), new_(new_text), limits_(limits), emit_(emit),
        old_stop_(old_text.size()), new_stop_(new_text.size()) {}

  void Run() {
    SkipCommon();
    uint64_t tail = CommonTailBytes(old_, old_at_.offset, new_, new_at_.offset);
    old_stop_ -= tail;
    new_stop_ -= tail;
    while (old_at_.offset < old_stop_ || new_at_.offset < new_stop_) {
      if (old_at_.offset == old_stop_ || new_at_.offset == new_stop_) {
        EmitTo(old_stop_, new_stop_);  // one side is used up: the rest of the other is added or deleted
        break;
      }
      Step();
      SkipCommon();
    }
  }

 private:
  struct At {
    uint64_t offset = 0, line = 0;
  };

  void SkipCommon() {
    SkippedLines skipped = CommonLinesAhead(old_, old_at_.offset, old_stop_, new_, new_at_.offset, new_stop_);
    old_at_ = {old_at_.offset + skipped.bytes, old_at_.line + skipped.lines};
    new_at_ = {new_at_.offset + skipped.bytes, new_at_.line + skipped.lines};
  }

  /// Reports the lines from where each side stands to old_end / new_end as one run, and moves
  /// past them.
  void Emit(uint64_t old_end, uint64_t old_lines, uint64_t new_end, uint64_t new_lines) {
    emit_({old_at_.line, old_lines, new_at_.line, new_lines, old_at_.offset, old_end, new_at_.offset, new_end});
    old_at_ = {old_end, old_at_.line + old_lines};
    new_at_ = {new_end, new_at_.line + new_lines};
  }
  void EmitTo(uint64_t old_end, uint64_t new_end) {
    Emit(old_end, old_.CountLines(old_at_.offset, old_end), new_end, new_.CountLines(new_at_.offset, new_end));
  }

  /// Reports the runs of one window and moves past them (at least one line). Windows start
  /// small, since most edits are a few lines and the texts are in step again right after them,
  /// and grow (to window_bytes / window_lines) only while they cannot vouch for anything.
  void Step() {
    size_t bytes = std::min(kFirstWindowBytes, limits_.window_bytes), lines = std::min(kFirstWindowLines, limits_.window_lines);
    while (!TryWindow(bytes, lines, bytes == limits_.window_bytes && lines == limits_.window_lines)) {
      bytes = std::min(bytes * 2, limits_.window_bytes);
      lines = std::min(lines * 2, limits_.window_lines);
    }
  }

  /// One window of at most `bytes` and `lines` a side: false, having reported nothing, when it
  /// could not vouch for any run and is not the `largest` allowed.
  bool TryWindow(size_t bytes, size_t lines, bool largest) {
    Window old_window = ReadWindow(old_source_, old_at_.offset, old_stop_, bytes, lines);
    Window new_window = ReadWindow(new_source_, new_at_.offset, new_stop_, bytes, lines);
    if (old_window.lines() == 0 || new_window.lines() == 0) {
      if (!largest) return false;
      // A first line longer than the largest window: libgit2 cannot see it whole, and the first
      // lines differ (SkipCommon stopped there), so one replaces the other.
      EmitTo(old_.LineEnd(old_at_.offset), new_.LineEnd(new_at_.offset));
      return true;
    }
    std::vector<ChangedLines> runs = ChangedLineRuns(old_window.text, new_window.text);
    const uint64_t old_trusted = old_window.lines() - old_window.Untrusted();
    const uint64_t new_trusted = new_window.lines() - new_window.Untrusted();
    size_t kept = 0;
    while (kept < runs.size() && runs[kept].old_line + runs[kept].old_count <= old_trusted &&
           runs[kept].new_line + runs[kept].new_count <= new_trusted)
      ++kept;
    // The windows' ends are in step when every run was kept (what follows the last is common).
    uint64_t old_cut = kept < runs.size() ? runs[kept].old_line : old_window.lines();
    uint64_t new_cut = kept < runs.size() ? runs[kept].new_line : new_window.lines();
    if (old_cut == 0 && new_cut == 0) {
      const ChangedLines& first = runs.front();
      uint64_t old_end = first.old_line + first.old_count, new_end = first.new_line + first.new_count;
      if (old_window.EndsAt(old_end) || new_window.EndsAt(new_end)) {
        if (!largest) return false;
        Unstuck(old_window, new_window);
        return true;
      }
      kept = 1;  // it ends inside the window, where both sides are in step again
      old_cut = old_end;
      new_cut = new_end;
    }
    for (size_t i = 0; i < kept; ++i) {
      const ChangedLines& run = runs[i];
      emit_({old_at_.line + run.old_line, run.old_count, new_at_.line + run.new_line, run.new_count,
             old_at_.offset + old_window.starts[run.old_line], old_at_.offset + old_window.starts[run.old_line + run.old_count],
             new_at_.offset + new_window.starts[run.new_line], new_at_.offset + new_window.starts[run.new_line + run.new_count]});
    }
    old_at_ = {old_at_.offset + old_window.starts[old_cut], old_at_.line + old_cut};
    new_at_ = {new_at_.offset + new_window.starts[new_cut], new_at_.line + new_cut};
    return true;
  }

  /// Two windows with no line in common that libgit2 could find: one side's first lines may
  /// come back further on in the other (an insertion or deletion bigger than a window), else
  /// both windows are shown as replaced.
  void Unstuck(const Window& old_window, const Window& new_window) {
    auto inserted = FindFurther(new_source_, new_at_.offset, new_stop_, Anchor(old_window));
    auto deleted = FindFurther(old_source_, old_at_.offset, old_stop_, Anchor(new_window));
    if (inserted && (!deleted || *inserted - new_at_.offset <= *deleted - old_at_.offset)) {
      EmitTo(old_at_.offset, *inserted);
    } else if (deleted) {
      EmitTo(*deleted, new_at_.offset);
    } else {
      Emit(old_at_.offset + old_window.text.size(), old_window.lines(), new_at_.offset + new_window.text.size(),
           new_window.lines());
    }
  }

  static std::string_view Anchor(const Window& window) {
    uint64_t lines = 0;
    while (lines < window.lines() && lines < kAnchorMaxLines &&
           (lines < kAnchorMinLines || window.starts[lines] < kAnchorMinBytes))
      ++lines;
    return std::string_view(window.text).substr(0, window.starts[lines]);
  }

  /// Where `anchor` (whole lines) starts a line of `source` in (from, stop), looking no further
  /// than anchor_search_bytes ahead.
  std::optional<uint64_t> FindFurther(const TextSource& source, uint64_t from, uint64_t stop, std::string_view anchor) const {
    if (anchor.empty() || anchor.back() != '\n') return std::nullopt;  // an unterminated last line is no anchor
    std::string needle = "\n" + std::string(anchor);
    const uint64_t end = std::min(stop, from + limits_.anchor_search_bytes);
    std::string block;
    for (uint64_t at = from; at + needle.size() <= end;) {
      size_t length = static_cast<size_t>(std::min<uint64_t>(std::max(kSearchBlock, 2 * needle.size()), end - at));
      block.resize(length);
      source.Read(at, length, block.data());
      if (const void* hit = memmem(block.data(), length, needle.data(), needle.size()))
        return at + static_cast<uint64_t>(static_cast<const char*>(hit) - block.data()) + 1;
      if (at + length >= end) break;
      at += length - (needle.size() - 1);  // a match across two reads is found in the second
    }
    return std::nullopt;
  }

  const TextSource& old_source_;
  const TextSource& new_source_;
  TextReader old_, new_;
  const TextDiffLimits& limits_;
  const std::function<void(const LineChange&)>& emit_;
  At old_at_, new_at_;           ///< line starts up to which everything is reported, in step
  uint64_t old_stop_, new_stop_;  ///< where the common tail starts
};

}  // namespace

void FindChanges(const TextSource& old_text, const TextSource& new_text, const TextDiffLimits& limits,
                 const std::function<void(const LineChange&)>& emit) {
  ChangeFinder(old_text, new_text, limits, emit).Run();
}

}  // namespace sandboxd
