#include "text/hunk_parts.h"

#include <optional>
#include <string>

#include "base/errors.h"

namespace sandboxd {

HunkPartFinder::HunkPartFinder(const HunkPlace& hunk) : hunk_(hunk), old_at_(hunk.old_begin), new_at_(hunk.new_begin) {}

void HunkPartFinder::Body(std::string_view piece) {
  for (char c : piece) {
    if (at_line_start_) {
      origin_ = c;
      length_ = 0;
      at_line_start_ = false;
      continue;
    }
    ++length_;
    if (c == '\n') {
      EndLine();
      at_line_start_ = true;
    }
  }
}

void HunkPartFinder::EndLine() {
  const bool old_side = origin_ == ' ' || origin_ == '-', new_side = origin_ == ' ' || origin_ == '+';
  if (origin_ == '\\') {
    // "\ No newline at end of file": the line before lacks the newline the body gave it.
    if ((last_origin_ == ' ' || last_origin_ == '-') && old_at_ > hunk_.old_begin) --old_at_;
    if ((last_origin_ == ' ' || last_origin_ == '+') && new_at_ > hunk_.new_begin) --new_at_;
    last_origin_ = origin_;
    return;
  }
  if (origin_ == ' ') ClosePart();
  else if (origin_ == '-' || origin_ == '+') OpenPart();
  else throw Error(Code::kFailed, "a hunk's body holds a line that is neither context nor change");
  if (old_side) old_at_ += length_;
  if (new_side) new_at_ += length_;
  last_origin_ = origin_;
}

void HunkPartFinder::OpenPart() {
  if (in_part_) return;
  in_part_ = true;
  part_.old_begin = old_at_;
  part_.new_begin = new_at_;
}

void HunkPartFinder::ClosePart() {
  if (!in_part_) return;
  in_part_ = false;
  part_.old_end = old_at_;
  part_.new_end = new_at_;
  parts_.push_back(part_);
}

std::vector<HunkPlace> HunkPartFinder::Finish() {
  if (!at_line_start_) throw Error(Code::kFailed, "a hunk's body ends inside a line");
  ClosePart();
  // The body must cover the hunk's place exactly: a part outside it would take bytes of
  // another hunk, or of nothing the user saw.
  if (old_at_ != hunk_.old_end || new_at_ != hunk_.new_end)
    throw Error(Code::kFailed, "a hunk's body does not match where the hunk lies");
  return std::move(parts_);
}

namespace {

class PartCounter final : public HunkSink {
 public:
  void Hunk(int, std::string_view, const HunkPlace& place) override {
    Close();
    finder_.emplace(place);
  }
  bool WantsBody(int) override { return true; }
  void Body(std::string_view piece) override { finder_->Body(piece); }
  std::vector<int> Finish() {
    Close();
    return std::move(counts_);
  }

 private:
  void Close() {
    if (finder_) counts_.push_back(static_cast<int>(finder_->Finish().size()));
    finder_.reset();
  }
  std::optional<HunkPartFinder> finder_;
  std::vector<int> counts_;
};

}  // namespace

std::vector<int> CountHunkParts(const TextSource& old_text, const TextSource& new_text, int context_lines,
                                const TextDiffLimits& limits) {
  PartCounter counter;
  ForEachHunk(old_text, new_text, context_lines, counter, limits);
  return counter.Finish();
}

}  // namespace sandboxd
