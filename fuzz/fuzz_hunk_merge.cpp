// Hostile input: a file's live text and its text in the sandbox (a job writes the latter, anyone
// with write access to the root the former), merged by a per-hunk commit. Input: one byte of
// context lines (mod 6), one byte choosing hunks (hunk N is approved when bit (N - 1) % 8 is set),
// then the old text, a NUL byte and the new text. Beyond not crashing on any choice of hunks:
// approving every hunk gives the new text and none the old, byte for byte; texts differ exactly
// when they have hunks; every part of a hunk (PATH:N.M) merges as the hunk; and a hunk number
// past the last is refused as NotFound.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"
#include "check.h"
#include "text/hunk_merge.h"
#include "text/hunk_parts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sandboxd;
  using fuzz::Require;
  if (size < 2) return 0;
  int context = data[0] % 6;
  unsigned mask = data[1];
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  size_t nul = rest.find('\0');
  std::string_view old_text = rest.substr(0, nul);
  std::string_view new_text = rest.substr(nul == std::string_view::npos ? rest.size() : nul + 1);

  size_t count = CountHunks(old_text, new_text, context);
  Require((count == 0) == (old_text == new_text), "texts differ exactly when there are hunks");
  std::set<int> all, chosen;
  for (int n = 1; n <= static_cast<int>(count); ++n) {
    all.insert(n);
    if (mask & (1u << ((n - 1) % 8))) chosen.insert(n);
  }
  Require(ApplyHunks(old_text, new_text, all, context) == new_text, "approving every hunk gives the new text");
  Require(ApplyHunks(old_text, new_text, std::set<int>{}, context) == old_text, "approving no hunk gives the old text");
  // Parts (hunk_parts.h): every part of a hunk is the hunk; any choice of parts merges cleanly.
  std::vector<int> parts = CountHunkParts(MemoryText(old_text), MemoryText(new_text), context);
  Require(parts.size() == count, "every hunk has its parts");
  HunkPick chosen_parts;
  for (int n = 1; n <= static_cast<int>(count); ++n) {
    Require(parts[static_cast<size_t>(n - 1)] >= 1, "a hunk has a part at least");
    HunkPick every;
    for (int p = 1; p <= parts[static_cast<size_t>(n - 1)]; ++p) {
      every.parts[n].insert(p);
      if (mask & (1u << ((n + p) % 8))) chosen_parts.parts[n].insert(p);
    }
    Require(ApplyHunks(old_text, new_text, every, context) == ApplyHunks(old_text, new_text, std::set<int>{n}, context),
            "every part of a hunk merges as the hunk");
  }
  ApplyHunks(old_text, new_text, chosen_parts, context);
  // Any choice must merge cleanly (the sanitizers watch). That the diff from the result to the
  // new text then shows exactly the hunks not chosen, as hunk_merge.h says, is not checked: with
  // repeated lines libgit2 may cut that diff differently (corpus/hunk_merge/ambiguous-blank-lines).
  ApplyHunks(old_text, new_text, chosen, context);
  try {
    ApplyHunks(old_text, new_text, std::set<int>{static_cast<int>(count) + 1}, context);
    Require(false, "a hunk past the last is refused");
  } catch (const Error& e) {
    Require(e.code() == Code::kNotFound, "a hunk past the last is NotFound");
  }
  return 0;
}
