#include "change_selection.h"

#include "errors.h"
#include "selector.h"

namespace sandboxd {
std::string DisplayPath(const Change& change, const std::string& root_prefix) {
  if (change.path == ".") return root_prefix.empty() ? "." : root_prefix.substr(0, root_prefix.size() - 1);
  return root_prefix + change.path;
}

std::vector<RootChanges> SelectChanges(const std::vector<RootChanges>& all, const std::vector<std::string>& selectors,
                                       const std::vector<std::string>& prefixes, const std::string& sandbox_id) {
  if (selectors.empty()) return all;
  std::vector<bool> used(selectors.size(), false);
  std::vector<RootChanges> selected;
  for (const auto& root : all) {
    RootChanges kept{root.root, {}};
    for (const auto& change : root.changes) {
      std::string shown = DisplayPath(change, prefixes.at(root.root));
      bool take = false;
      for (size_t i = 0; i < selectors.size(); ++i) {
        bool hit = api::SelectorNames(selectors[i], shown);
        if (!hit) {
          auto hunk = api::ParseHunkSelector(selectors[i]);
          hit = hunk && hunk->path == shown;
        }
        if (hit) {
          used[i] = true;
          take = true;
        }
      }
      if (take) kept.changes.push_back(change);
    }
    selected.push_back(std::move(kept));
  }
  for (size_t i = 0; i < selectors.size(); ++i)
    if (!used[i]) throw Error(Code::kNotFound, "no change at '" + selectors[i] + "' in sandbox " + sandbox_id);
  return selected;
}

}  // namespace sandboxd
