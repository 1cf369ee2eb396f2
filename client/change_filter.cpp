#include "change_filter.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "selector.h"

namespace sandboxctl {
namespace {

using sandboxd::api::Selector;

/// The selectors that name `path` besides itself: each directory above it, then ".".
/// Walking up keeps the narrowing linear in the number of changes, which can be large
/// (a node_modules).
std::vector<std::string> SelectorsAbove(const std::string& path) {
  std::vector<std::string> above;
  for (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/', slash - 1))
    above.push_back(path.substr(0, slash));
  if (path != ".") above.push_back(".");
  return above;
}

}  // namespace

std::vector<Selector> NarrowSelectors(const std::vector<ChangeEntry>& changes, const std::vector<Selector>& selectors,
                                      const PathPatterns& patterns, const ReviewFilter& acts_on) {
  std::vector<bool> named(changes.size(), selectors.empty());
  sandboxd::api::SelectorIndex index(selectors);
  std::vector<bool> whole(selectors.size(), false), of_a_change(selectors.size(), false);
  for (size_t c = 0; c < changes.size(); ++c) {
    index.ForEachNaming(changes[c].path, [&](size_t s) { named[c] = whole[s] = true; });
    for (const auto& [s, hunk] : index.HunksOf(changes[c].path)) of_a_change[s] = true;
  }
  std::vector<Selector> as_typed;
  for (size_t s = 0; s < selectors.size(); ++s) {
    if (whole[s]) continue;
    // A hunk selector of a change passes when its file does; anything else goes as typed,
    // for the daemon to refuse by name.
    if (!of_a_change[s] || patterns.Passes(selectors[s].path)) as_typed.push_back(selectors[s]);
  }

  // A directory that holds a change the user does not want cannot be named: its selector
  // would take that change too.
  std::set<std::string> holds_unwanted;
  std::vector<bool> wanted(changes.size());
  for (size_t c = 0; c < changes.size(); ++c) {
    wanted[c] = named[c] && !changes[c].left_out && patterns.Passes(changes[c].path) &&
                (changes[c].renamed_with.empty() || patterns.Passes(changes[c].renamed_with));
    if (wanted[c]) continue;
    for (auto& above : SelectorsAbove(changes[c].path)) holds_unwanted.insert(std::move(above));
  }
  std::set<std::string> chosen;
  for (size_t c = 0; c < changes.size(); ++c)
    if (wanted[c] && !holds_unwanted.count(changes[c].path) && (!acts_on || acts_on(changes[c].review)))
      chosen.insert(changes[c].path);

  // A change beneath a chosen directory is named by it already; naming it again would make
  // the daemon count it twice.
  std::vector<Selector> narrowed;
  for (const auto& change : changes) {
    if (!chosen.count(change.path)) continue;
    auto above = SelectorsAbove(change.path);
    if (std::none_of(above.begin(), above.end(), [&](const std::string& dir) { return chosen.count(dir) > 0; }))
      narrowed.push_back(Selector{change.path});
  }
  narrowed.insert(narrowed.end(), as_typed.begin(), as_typed.end());
  return narrowed;
}

bool CommitTakes(const std::string& review, bool all) {
  return review == "approved" || review == "partial" || (all && review == "pending");
}

}  // namespace sandboxctl
