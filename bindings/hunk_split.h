#pragma once
/// git add -p's `s`: a hunk as `diff` shows it, cut into its parts, each run of changed lines
/// with the unchanged lines around it, as hunks of their own. The parts are numbered from 1 in
/// order, as the daemon numbers them for PATH:N.M (daemon/as_owner/text/hunk_parts.h finds their bytes);
/// the unchanged lines between two parts end the one and begin the next, as git shows them.
/// sandboxctl's review shows them; the daemon's diff of PATH:N.M writes one. Pure text work.

#include <set>
#include <string>
#include <vector>

namespace sandboxd::api {

/// The parts of `hunk` (from its "@@" line on, newlines kept), each with a "@@ -a,b +c,d @@"
/// line of its own; one part is `hunk` itself, unchanged. A hunk whose "@@" line cannot be
/// read is one part.
std::vector<std::string> SplitHunk(const std::string& hunk);

/// The parts of `hunk` numbered in `asked` (from 1), as `diff PATH:N.M ...` writes them: the
/// parts SplitHunk cuts, except that neighbours asked for both are joined into one hunk. Two
/// neighbours share the unchanged lines between them, and `git apply` does not take hunks that
/// overlap (as git add -p joins them again before it applies them). Numbers past the last part
/// are left out.
std::vector<std::string> AskedParts(const std::string& hunk, const std::set<int>& asked);

}  // namespace sandboxd::api
