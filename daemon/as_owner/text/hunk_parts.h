#pragma once
/// The parts of a hunk, as git add -p's `s` splits it: each run of changed lines ('-' and '+'
/// lines together) apart from the next by unchanged ones. Part M of hunk N (the selector
/// PATH:N.M) is found from the body `diff` shows for hunk N, so the parts a user is shown are
/// the parts a partial commit applies. Pure: reads a hunk's body, writes nothing.

#include <cstdint>
#include <string_view>
#include <vector>

#include "text/text_hunks.h"

namespace sandboxd {

/// Where the parts of one hunk lie in both texts, from the hunk's place and its body.
class HunkPartFinder {
 public:
  explicit HunkPartFinder(const HunkPlace& hunk);
  /// The next piece of the hunk's body (HunkSink::Body): lines may be cut anywhere between pieces.
  void Body(std::string_view piece);
  /// The places of the parts, in order: [old_begin, old_end) of the old text holds the part's
  /// '-' lines, [new_begin, new_end) of the new text its '+' lines; what lies between two
  /// parts is the same in both texts. Throws Error(kFailed) for a body that does not fit
  /// the hunk's place.
  std::vector<HunkPlace> Finish();

 private:
  void EndLine();
  void OpenPart();
  void ClosePart();

  const HunkPlace hunk_;
  uint64_t old_at_, new_at_;        ///< where the next body line starts in each text
  bool at_line_start_ = true;
  char origin_ = 0;                 ///< ' ', '-', '+' or '\\' of the line being read
  char last_origin_ = 0;            ///< of the line before it
  uint64_t length_ = 0;             ///< bytes of the line being read, after its origin
  bool in_part_ = false;
  HunkPlace part_;
  std::vector<HunkPlace> parts_;
};

/// For each hunk `diff` shows for old → new (in order), how many parts `s` splits it into.
std::vector<int> CountHunkParts(const TextSource& old_text, const TextSource& new_text, int context_lines = 3,
                                const TextDiffLimits& limits = {});

}  // namespace sandboxd
