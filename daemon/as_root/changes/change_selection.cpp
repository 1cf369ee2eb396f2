#include "changes/change_selection.h"

#include <set>

#include "base/errors.h"
#include "selector.h"

namespace sandboxd {
std::string DisplayPath(const Change& change, const std::string& root_prefix) {
  if (change.path == ".") return root_prefix.empty() ? "." : root_prefix.substr(0, root_prefix.size() - 1);
  return root_prefix + change.path;
}

std::vector<RootChanges> SelectChanges(const std::vector<RootChanges>& all, const std::vector<api::Selector>& selectors,
                                       const std::vector<std::string>& prefixes, const std::string& sandbox_id) {
  if (selectors.empty()) return all;
  api::SelectorIndex index(selectors);
  std::vector<bool> used(selectors.size(), false);
  std::vector<RootChanges> selected;
  std::string shown;
  for (const auto& root : all) {
    RootChanges kept{root.root, {}};
    for (const auto& change : root.changes) {
      shown = DisplayPath(change, prefixes.at(root.root));
      bool take = false;
      index.ForEachNaming(shown, [&](size_t i) { used[i] = take = true; });
      for (const auto& [i, hunk] : index.HunksOf(shown)) used[i] = take = true;
      if (take) kept.changes.push_back(change);
    }
    selected.push_back(std::move(kept));
  }
  for (size_t i = 0; i < selectors.size(); ++i)
    if (!used[i]) throw Error(Code::kNotFound, "no change at '" + api::ToString(selectors[i]) + "' in sandbox " + sandbox_id);
  return selected;
}

void AddRenamePartners(const std::vector<RootChanges>& all, const SandboxRenames& renames,
                       std::vector<RootChanges>& selected) {
  for (auto& kept : selected) {
    auto pairs = renames.find(kept.root);
    if (pairs == renames.end()) continue;
    std::set<std::string> paths;
    for (const auto& change : kept.changes) paths.insert(change.path);
    size_t before = paths.size();
    for (const auto& rename : pairs->second) {
      if (paths.count(rename.from) || paths.count(rename.to)) paths.insert({rename.from, rename.to});
    }
    if (paths.size() == before) continue;
    for (const auto& root : all) {
      if (root.root != kept.root) continue;
      kept.changes.clear();
      for (const auto& change : root.changes)
        if (paths.count(change.path)) kept.changes.push_back(change);
    }
  }
}

}  // namespace sandboxd
