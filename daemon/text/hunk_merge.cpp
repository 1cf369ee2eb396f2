#include "text/hunk_merge.h"

#include <algorithm>

#include "base/errors.h"
#include "text/text_reader.h"

namespace sandboxd {
namespace {

/// Copies of big stretches go through blocks this large.
constexpr size_t kCopyBlock = size_t{1} << 20;

std::string HunkCountText(size_t count) { return std::to_string(count) + (count == 1 ? " hunk" : " hunks"); }

class HunkCounter final : public HunkSink {
 public:
  void Hunk(int, std::string_view, const HunkPlace&) override { ++count; }
  size_t count = 0;
};

/// Writes the old text with the approved hunks' new bytes in place of their old ones.
class Merger final : public HunkSink {
 public:
  Merger(const TextSource& old_text, const TextSource& new_text, const std::set<int>& approved,
         const std::function<void(std::string_view)>& out)
      : old_(old_text, kCopyBlock), new_(new_text, kCopyBlock), approved_(approved), out_(out) {}

  void Hunk(int number, std::string_view, const HunkPlace& place) override {
    // Hunks come in order and never overlap; anything else would silently corrupt a user's file.
    if (place.old_begin < done_ || place.old_end < place.old_begin || place.old_end > old_.size() ||
        place.new_end < place.new_begin || place.new_end > new_.size())
      throw Error(Code::kFailed, "hunk " + std::to_string(number) + " of a diff does not fit its file");
    Copy(old_, done_, place.old_begin);
    if (approved_.count(number) != 0) Copy(new_, place.new_begin, place.new_end);
    else Copy(old_, place.old_begin, place.old_end);
    done_ = place.old_end;
    count_ = static_cast<size_t>(number);
  }

  /// The rest of the old text; the number of hunks there were.
  size_t Finish() {
    Copy(old_, done_, old_.size());
    return count_;
  }

 private:
  void Copy(TextReader& text, uint64_t begin, uint64_t end) {
    while (begin < end) {
      std::string_view piece = text.From(begin);
      piece = piece.substr(0, static_cast<size_t>(std::min<uint64_t>({piece.size(), end - begin, kCopyBlock})));
      out_(piece);
      begin += piece.size();
    }
  }

  TextReader old_, new_;
  const std::set<int>& approved_;
  const std::function<void(std::string_view)>& out_;
  uint64_t done_ = 0;  ///< old bytes [0, done_) are written (or replaced)
  size_t count_ = 0;
};

[[noreturn]] void ThrowNoHunk(int number, size_t count) {
  throw Error(Code::kNotFound, "hunk " + std::to_string(number) + " does not exist: the change has " + HunkCountText(count));
}

}  // namespace

size_t CountHunks(const TextSource& old_text, const TextSource& new_text, int context_lines, const TextDiffLimits& limits) {
  HunkCounter counter;
  ForEachHunk(old_text, new_text, context_lines, counter, limits);
  return counter.count;
}

size_t CountHunks(std::string_view old_text, std::string_view new_text, int context_lines) {
  return CountHunks(MemoryText(old_text), MemoryText(new_text), context_lines);
}

void MergeHunks(const TextSource& old_text, const TextSource& new_text, const std::set<int>& approved,
                const std::function<void(std::string_view)>& out, int context_lines, const TextDiffLimits& limits) {
  if (!approved.empty() && *approved.begin() < 1) {
    // Refused before anything is written, with the count the message needs.
    ThrowNoHunk(*approved.begin(), CountHunks(old_text, new_text, context_lines, limits));
  }
  Merger merger(old_text, new_text, approved, out);
  ForEachHunk(old_text, new_text, context_lines, merger, limits);
  size_t count = merger.Finish();
  if (!approved.empty() && static_cast<size_t>(*approved.rbegin()) > count) ThrowNoHunk(*approved.rbegin(), count);
}

std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const std::set<int>& approved,
                       int context_lines) {
  std::string merged;
  merged.reserve(std::max(old_text.size(), new_text.size()));
  MergeHunks(MemoryText(old_text), MemoryText(new_text), approved, [&](std::string_view piece) { merged.append(piece); },
             context_lines);
  return merged;
}

}  // namespace sandboxd
