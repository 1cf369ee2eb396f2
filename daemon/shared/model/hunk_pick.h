#pragma once
/// Which hunks of a text modification a partial commit takes: hunks whole, and parts of hunks
/// the owner split (git add -p's `s`: part M of hunk N is its M-th run of changed lines, runs
/// apart by unchanged lines). Numbers are from 1, as `diff` and the selectors number them.

#include <map>
#include <set>
#include <vector>

namespace sandboxd {

struct HunkPick {
  std::set<int> hunks;                 ///< hunks taken whole
  std::map<int, std::set<int>> parts;  ///< hunk → the parts of it taken (never empty; not in `hunks`)

  bool empty() const { return hunks.empty() && parts.empty(); }
  bool operator==(const HunkPick&) const = default;
};

/// How `diff` cuts a change: its hunks (-1 for a change that is decided whole only: no text
/// modification), and when asked for, how many parts each hunk splits into.
struct HunkShape {
  int hunks = -1;
  std::vector<int> parts;  ///< per hunk, in order
};

}  // namespace sandboxd
