#pragma once
/// Narrowing a change set by selectors as users type them: a change's path as `changes` shows
/// it (with "N/" for multi-root sandboxes), a directory above changes (all beneath it), or
/// PATH:N for one hunk (here: the file the hunk belongs to). A selector that names nothing is
/// refused, never silently ignored.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "selector.h"
#include "model/renames.h"
#include "sandbox/root_changes.h"

namespace sandboxd {

/// The path of `change` in root `root` as users see it.
std::string DisplayPath(const Change& change, const std::string& root_prefix);

/// The changes matching any selector (all when `selectors` is empty), in the original order.
/// `prefixes[i]` is root i's display prefix. Throws Error(kNotFound) naming a selector that
/// matches no change of sandbox `sandbox_id`.
std::vector<RootChanges> SelectChanges(const std::vector<RootChanges>& all, const std::vector<api::Selector>& selectors,
                                       const std::vector<std::string>& prefixes, const std::string& sandbox_id);

/// Adds to `selected` the other half of every rename (of `renames`) that has one half there,
/// keeping the order of `all`: a rename is shown and decided as one.
void AddRenamePartners(const std::vector<RootChanges>& all, const SandboxRenames& renames,
                       std::vector<RootChanges>& selected);

}  // namespace sandboxd
