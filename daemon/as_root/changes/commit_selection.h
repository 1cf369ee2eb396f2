#pragma once
/// Which changes a commit takes, decided a change at a time as the reviewed change set streams by
/// (Review::ForEach) instead of over the whole of it held: what this holds grows with the renames
/// and with the directories the stream is inside of, never with the rest of a change set of a
/// million. The rules are Review::Selection's: approved changes whole, partly approved text
/// files by their approved hunks, each half of a rename named when its partner is, and the new
/// directories a taken change needs to exist in (a rejected one is refused).

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "changes/approval.h"
#include "changes/git_units.h"
#include "changes/reviewed_change.h"
#include "model/change.h"
#include "model/hunk_pick.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"
#include "selector.h"

namespace sandboxd {

/// One change a commit takes.
struct TakenChange {
  size_t root = 0;
  Change change;
  HunkPick hunks;       ///< the approved hunks and parts when only they go live; empty: the change whole
  Approval approval;    ///< the decision it is taken on (the hunks left keep theirs)
};

/// {root, added path} → the deleted path, of renames both of whose halves are taken.
using TakenRenames = std::map<std::pair<size_t, std::string>, std::string>;

/// Whether commit --all (or approve --all) may approve `change` as pending, shown as `shown`:
/// content its owner could not be shown only when a selector names it by its own path.
inline bool MayApproveUnseen(const Change& change, const api::SelectorIndex& index, const std::string& shown) {
  return !UnreadableByOwner(change) || index.NamesExactly(shown);
}

class SelectionStream {
 public:
  using Take = std::function<void(TakenChange&&)>;
  /// Takes the approved changes `selectors` name (all without); `approve_pending` first approves
  /// what they name that is pending (commit --all). Each change taken goes to `take`, in scan
  /// order, except that a new directory taken along for a change beneath it comes right before
  /// that change (its place in scan order is known only then).
  SelectionStream(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending, Take take);
  /// The next change of the stream. Throws Error(kInvalidArgument) when it is taken but a new
  /// directory it needs is rejected, or when the stream is past a repository's data
  /// (git_data.h) of which the commit would take a part.
  void Add(ReviewedChange item);
  /// Throws Error(kNotFound) naming a selector that named nothing, Error(kInvalidArgument) as Add
  /// for the last repository's data; returns the renames taken.
  TakenRenames Finish();

  size_t seen() const { return seen_; }
  size_t taken() const { return taken_; }

 private:
  /// A directory change the stream may still meet changes beneath.
  struct Directory {
    ReviewedChange item;
    bool taken = false;
  };
  void Emit(const ReviewedChange& item, HunkPick hunks);

  const SandboxReader& sandbox_;
  const std::vector<api::Selector>& selectors_;
  api::SelectorIndex index_;
  std::vector<bool> used_;
  bool approve_pending_;
  Take take_;
  std::vector<Directory> directories_;  ///< in path order
  std::map<std::pair<size_t, std::string>, bool> halves_;  ///< rename halves met: taken?
  TakenRenames renames_;
  size_t seen_ = 0, taken_ = 0;
  GitUnitTally git_;  ///< a repository's data goes live whole or not at all
};

}  // namespace sandboxd
