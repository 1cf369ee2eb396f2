#include "text/hunk_merge.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "base/errors.h"
#include "text/hunk_parts.h"
#include "text/text_reader.h"

namespace sandboxd {
namespace {

/// Copies of big stretches go through blocks this large.
constexpr size_t kCopyBlock = size_t{1} << 20;

std::string HunkCountText(size_t count) { return std::to_string(count) + (count == 1 ? " hunk" : " hunks"); }

class HunkTally final : public HunkSink {
 public:
  void Hunk(int, std::string_view, const HunkPlace&) override { ++count; }
  size_t count = 0;
};

/// Writes the old text with the approved hunks' new bytes in place of their old ones (of a
/// split hunk, only its approved parts').
class Merger final : public HunkSink {
 public:
  Merger(const TextSource& old_text, const TextSource& new_text, const HunkPick& pick,
         const std::function<void(std::string_view)>& out)
      : old_(old_text, kCopyBlock), new_(new_text, kCopyBlock), pick_(pick), out_(out) {}

  void Hunk(int number, std::string_view, const HunkPlace& place) override {
    WriteSplit();
    // Hunks come in order and never overlap; anything else would silently corrupt a user's file.
    if (place.old_begin < done_ || place.old_end < place.old_begin || place.old_end > old_.size() ||
        place.new_end < place.new_begin || place.new_end > new_.size())
      throw Error(Code::kFailed, "hunk " + std::to_string(number) + " of a diff does not fit its file");
    count_ = static_cast<size_t>(number);
    if (auto parts = pick_.parts.find(number); parts != pick_.parts.end() && pick_.hunks.count(number) == 0) {
      // Written once its body has told where its parts lie.
      split_.emplace(place);
      split_number_ = number;
      split_parts_ = &parts->second;
      split_place_ = place;
      return;
    }
    Replace(place, pick_.hunks.count(number) != 0);
  }
  bool WantsBody(int number) override { return split_ && number == split_number_; }
  void Body(std::string_view piece) override {
    if (split_) split_->Body(piece);
  }

  /// The rest of the old text; the number of hunks there were.
  size_t Finish() {
    WriteSplit();
    Copy(old_, done_, old_.size());
    return count_;
  }

 private:
  /// The old text up to `place`, then the place's bytes of the new text or of the old.
  void Replace(const HunkPlace& place, bool take_new) {
    Copy(old_, done_, place.old_begin);
    if (take_new) Copy(new_, place.new_begin, place.new_end);
    else Copy(old_, place.old_begin, place.old_end);
    done_ = place.old_end;
  }

  void WriteSplit() {
    if (!split_) return;
    std::vector<HunkPlace> parts = split_->Finish();
    split_.reset();
    const std::set<int>& taken = *split_parts_;
    if (!taken.empty() && (*taken.begin() < 1 || static_cast<size_t>(*taken.rbegin()) > parts.size()))
      throw Error(Code::kNotFound, "hunk " + std::to_string(split_number_) + " has " + std::to_string(parts.size()) +
                                       (parts.size() == 1 ? " part" : " parts") + "; there is no part " +
                                       std::to_string(*taken.begin() < 1 ? *taken.begin() : *taken.rbegin()));
    for (size_t i = 0; i < parts.size(); ++i) {
      const HunkPlace& part = parts[i];
      if (part.old_begin < done_ || part.old_end > split_place_.old_end || part.new_end > split_place_.new_end)
        throw Error(Code::kFailed, "a part of hunk " + std::to_string(split_number_) + " does not fit its file");
      Replace(part, taken.count(static_cast<int>(i + 1)) != 0);
    }
    Copy(old_, done_, split_place_.old_end);
    done_ = split_place_.old_end;
  }

  void Copy(TextReader& text, uint64_t begin, uint64_t end) {
    while (begin < end) {
      std::string_view piece = text.From(begin);
      piece = piece.substr(0, static_cast<size_t>(std::min<uint64_t>({piece.size(), end - begin, kCopyBlock})));
      out_(piece);
      begin += piece.size();
    }
  }

  TextReader old_, new_;
  const HunkPick& pick_;
  const std::function<void(std::string_view)>& out_;
  uint64_t done_ = 0;  ///< old bytes [0, done_) are written (or replaced)
  size_t count_ = 0;
  std::optional<HunkPartFinder> split_;  ///< the split hunk whose body is coming
  int split_number_ = 0;
  const std::set<int>* split_parts_ = nullptr;
  HunkPlace split_place_;
};

[[noreturn]] void ThrowNoHunk(int number, size_t count) {
  throw Error(Code::kNotFound, "hunk " + std::to_string(number) + " does not exist: the change has " + HunkCountText(count));
}

}  // namespace

size_t CountHunks(const TextSource& old_text, const TextSource& new_text, int context_lines, const TextDiffLimits& limits) {
  HunkTally counter;
  ForEachHunk(old_text, new_text, context_lines, counter, limits);
  return counter.count;
}

size_t CountHunks(std::string_view old_text, std::string_view new_text, int context_lines) {
  return CountHunks(MemoryText(old_text), MemoryText(new_text), context_lines);
}

void MergeHunks(const TextSource& old_text, const TextSource& new_text, const HunkPick& pick,
                const std::function<void(std::string_view)>& out, int context_lines, const TextDiffLimits& limits) {
  int lowest = pick.hunks.empty() ? 1 : *pick.hunks.begin();
  if (!pick.parts.empty()) lowest = std::min(lowest, pick.parts.begin()->first);
  if (lowest < 1) {
    // Refused before anything is written, with the count the message needs.
    ThrowNoHunk(lowest, CountHunks(old_text, new_text, context_lines, limits));
  }
  Merger merger(old_text, new_text, pick, out);
  ForEachHunk(old_text, new_text, context_lines, merger, limits);
  size_t count = merger.Finish();
  int highest = pick.hunks.empty() ? 0 : *pick.hunks.rbegin();
  if (!pick.parts.empty()) highest = std::max(highest, pick.parts.rbegin()->first);
  if (static_cast<size_t>(highest) > count) ThrowNoHunk(highest, count);
}

void MergeHunks(const TextSource& old_text, const TextSource& new_text, const std::set<int>& approved,
                const std::function<void(std::string_view)>& out, int context_lines, const TextDiffLimits& limits) {
  MergeHunks(old_text, new_text, HunkPick{approved, {}}, out, context_lines, limits);
}

std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const HunkPick& pick, int context_lines) {
  std::string merged;
  merged.reserve(std::max(old_text.size(), new_text.size()));
  MergeHunks(MemoryText(old_text), MemoryText(new_text), pick, [&](std::string_view piece) { merged.append(piece); },
             context_lines);
  return merged;
}

std::string ApplyHunks(std::string_view old_text, std::string_view new_text, const std::set<int>& approved,
                       int context_lines) {
  return ApplyHunks(old_text, new_text, HunkPick{approved, {}}, context_lines);
}

}  // namespace sandboxd
