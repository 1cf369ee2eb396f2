#pragma once
/// The diff of a sandbox's change set, or of what selectors name, made a page of changes at a
/// time: the change set is read as a stream (Review::ForEach, with its renames), and each page
/// goes to the text helper on its own, so neither the daemon nor a helper ever holds a million
/// changes. A rename's two halves always share a page (the diff shows it as one, where its
/// added half is).

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "model/renames.h"
#include "review/review.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"

namespace sandboxd {

/// Changes of one root for one helper request, in scan order.
struct DiffPage {
  size_t root = 0;
  std::vector<Change> changes;
  std::vector<Rename> renames;                          ///< both halves among `changes`
  std::map<std::string, std::set<api::HunkRef>> only_hunks;  ///< the hunks and parts PATH:N(.M) selectors name
};

/// Hands `write` the pages of the diff of what `selectors` name (all without): a change a
/// selector names whole, one a hunk or part selector names (with only those hunks, unless another
/// selector names it whole), and the other half of a rename either half of which is named.
/// `write` returns false to stop (the reader went away). At most `page_size` changes a page
/// (a rename's halves may add one). A selector that named nothing is refused at the end
/// (Error kNotFound, as SelectChanges): with no other selector, before anything is written.
void ForEachDiffPage(Review& review, const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, size_t page_size,
                     const std::function<bool(const DiffPage&)>& write);

}  // namespace sandboxd
