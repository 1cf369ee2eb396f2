#pragma once
/// Hunks of a unified diff, as sandboxctl's `diff` prints them: parsed from its output, and
/// applied in part to the old text, which is what a commit of some approved hunks must leave in
/// the live file. The daemon's diff defines the hunks; the test checks that applying all of
/// them gives the sandbox's text, so a wrong diff cannot go unnoticed either.

#include <string>
#include <vector>

namespace sandboxd::model {

struct Hunk {
  int old_start = 0, old_count = 0, new_start = 0, new_count = 0;
  std::string text;                ///< the "@@ ... @@" line and its body, as printed
  std::vector<std::string> lines;  ///< body lines with their first character (' ', '-', '+')
};

/// The hunks of every file section in `diff` (all of them, in order).
std::vector<Hunk> ParseHunks(const std::string& diff);

/// `old_text` with the hunks whose `take[i]` is true applied; "" and ok=false when a hunk does
/// not fit the old text.
std::string ApplyHunks(const std::string& old_text, const std::vector<Hunk>& hunks, const std::vector<bool>& take, bool& ok);

}  // namespace sandboxd::model
