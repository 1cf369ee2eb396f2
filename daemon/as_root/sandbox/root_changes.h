#pragma once
/// A change set as the daemon hands it around: each root's changes, in scan order.

#include <cstddef>
#include <vector>

#include "model/change.h"

namespace sandboxd {

struct RootChanges {
  size_t root = 0;
  std::vector<Change> changes;
};

/// The changes of `items` (anything with a `root` and a `change`, in scan order), grouped by
/// root in that order.
template <typename Items>
std::vector<RootChanges> ChangesByRoot(const Items& items) {
  std::vector<RootChanges> changes;
  for (const auto& item : items) {
    if (changes.empty() || changes.back().root != item.root) changes.push_back({item.root, {}});
    changes.back().changes.push_back(item.change);
  }
  return changes;
}

}  // namespace sandboxd
