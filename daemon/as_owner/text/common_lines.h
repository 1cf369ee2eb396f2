#pragma once
/// Where two texts stop being the same, in whole lines: a big diff skips what both texts share
/// before it asks libgit2 about the rest, so a 100 MB log with a few edited lines costs a pass
/// of comparison, not a line diff of 100 MB.

#include <cstdint>

#include "text/text_reader.h"
#include "text/text_source.h"

namespace sandboxd {

struct SkippedLines {
  uint64_t bytes = 0;  ///< the same on both sides
  uint64_t lines = 0;
};

/// From line starts `old_at` and `new_at`, the whole lines the texts have in common, going
/// forward, up to `old_stop` and `new_stop`. A line counts only with its '\n': "x" at the end of
/// one text and "x\n" in the other are different lines, as libgit2 sees them.
SkippedLines CommonLinesAhead(TextReader& old_text, uint64_t old_at, uint64_t old_stop, TextReader& new_text,
                              uint64_t new_at, uint64_t new_stop);

/// How many bytes of whole lines both texts end with, counting no byte before line starts
/// `old_from` and `new_from`: the suffix starts at a line start in both texts.
uint64_t CommonTailBytes(TextReader& old_text, uint64_t old_from, TextReader& new_text, uint64_t new_from);

/// Whether two texts hold the same bytes.
bool SameText(const TextSource& a, const TextSource& b);

}  // namespace sandboxd
