#pragma once
/// git add -p's `s` on sandboxctl's side: a hunk as `diff` shows it, cut into its parts, each
/// run of changed lines with the unchanged lines around it, as hunks of their own. The parts
/// are numbered from 1 in order, as the daemon numbers them (PATH:N.M); the unchanged lines
/// between two parts end the one and begin the next, as git shows them. Pure text work.

#include <string>
#include <vector>

namespace sandboxctl {

/// The parts of `hunk` (from its "@@" line on, newlines kept), each with a "@@ -a,b +c,d @@"
/// line of its own; one part is `hunk` itself, unchanged. A hunk whose "@@" line cannot be
/// read is one part.
std::vector<std::string> SplitHunk(const std::string& hunk);

}  // namespace sandboxctl
