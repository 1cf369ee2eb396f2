#include "review/diff_pages.h"

#include <optional>
#include <utility>

#include "base/errors.h"
#include "changes/change_selection.h"
#include "selector.h"

namespace sandboxd {
namespace {

/// Thrown through Review::ForEach when the reader went away: the stream ends there.
struct StopDiff {};

/// The path a rename's other half is shown at, for selectors.
std::string PartnerShown(const std::string& partner, const std::string& prefix) {
  Change change;
  change.path = partner;
  return DisplayPath(change, prefix);
}

}  // namespace

void ForEachDiffPage(Review& review, const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, size_t page_size,
                     const std::function<bool(const DiffPage&)>& write) {
  api::SelectorIndex index(selectors);
  std::vector<bool> used(selectors.size(), false);
  DiffPage page;
  // The first half of a rename seen waits for the other, so that both go in one page.
  std::map<std::pair<size_t, std::string>, Change> waiting;
  auto flush = [&] {
    if (page.changes.empty()) return;
    if (!write(page)) throw StopDiff{};
    page = DiffPage{};
  };
  auto add = [&](size_t root, Change change) {
    if (page.root != root || page.changes.size() >= page_size) {
      flush();
      page.root = root;
    }
    page.changes.push_back(std::move(change));
  };
  try {
    review.ForEach(sandbox, [&](ReviewedChange&& item) {
      const std::string prefix = sandbox.PathPrefix(item.root);
      std::string shown = DisplayPath(item.change, prefix);
      const std::string& partner = !item.renamed_from.empty() ? item.renamed_from : item.renamed_to;
      std::set<api::HunkRef> only;  // what PATH:N(.M) selectors show of a change no selector names whole
      if (!selectors.empty()) {
        bool whole = false;
        index.ForEachNaming(shown, [&](size_t s) { used[s] = whole = true; });
        const auto& hunks = index.HunksOf(shown);
        for (const auto& [s, hunk] : hunks) used[s] = true;
        bool named = whole || !hunks.empty();
        // A rename is shown and decided as one: a selector naming either half shows both.
        if (!partner.empty()) {
          std::string partner_shown = PartnerShown(partner, prefix);
          named |= index.AnyNames(partner_shown) || !index.HunksOf(partner_shown).empty();
        }
        if (!named) return;
        if (!whole && partner.empty())
          for (const auto& [s, hunk] : hunks) only.insert(hunk);
      }
      if (partner.empty()) {
        std::string path = item.change.path;
        add(item.root, std::move(item.change));
        if (!only.empty()) page.only_hunks[path] = std::move(only);
        return;
      }
      auto other = waiting.find({item.root, partner});
      if (other == waiting.end()) {
        waiting.emplace(std::make_pair(item.root, item.change.path), std::move(item.change));
        return;
      }
      Change first = std::move(other->second);
      waiting.erase(other);
      add(item.root, std::move(first));
      page.changes.push_back(std::move(item.change));
      const Change& deleted = page.changes[page.changes.size() - (item.renamed_from.empty() ? 1 : 2)];
      const Change& added = page.changes[page.changes.size() - (item.renamed_from.empty() ? 2 : 1)];
      page.renames.push_back({deleted.path, added.path});
    });
    // (A half whose partner never came is shown as what it is.)
    for (auto& [key, change] : waiting) add(key.first, std::move(change));
    flush();
  } catch (const StopDiff&) {
    return;  // (no one is left to tell)
  }
  for (size_t s = 0; s < selectors.size(); ++s)
    if (!used[s]) throw Error(Code::kNotFound, "no change at '" + api::ToString(selectors[s]) + "' in sandbox " + sandbox.id());
}

}  // namespace sandboxd
