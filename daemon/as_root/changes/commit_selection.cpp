#include "changes/commit_selection.h"

#include "base/errors.h"
#include "changes/change_selection.h"

namespace sandboxd {
namespace {

/// Whether `path` is beneath directory `dir` (never "." here).
bool Beneath(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path[dir.size()] == '/' && path.compare(0, dir.size(), dir) == 0;
}

/// Whether the stream, now at `path`, is past every path beneath `dir`: in byte order those all
/// begin "dir/" and so come together, but not right after `dir` ("dir-1" comes between).
bool Past(const std::string& path, const std::string& dir) {
  return !Beneath(path, dir) && path > dir + "/";
}

}  // namespace

SelectionStream::SelectionStream(const SandboxReader& sandbox, const std::vector<api::Selector>& selectors, bool approve_pending,
                                 Take take)
    : sandbox_(sandbox),
      selectors_(selectors),
      index_(selectors),
      used_(selectors.size(), false),
      approve_pending_(approve_pending),
      take_(std::move(take)),
      git_([this](const GitUnit& unit) {
        const std::string shown = sandbox_.PathPrefix(unit.root) + unit.git_dir;
        throw Error(Code::kInvalidArgument,
                    "the commit would take " + std::to_string(unit.chosen + unit.in_part) + " of the " + std::to_string(unit.members) +
                        " changes of the git data in " + shown + " of sandbox " + sandbox_.id() +
                        (unit.in_part ? " (some by hunks)" : " (the others are pending or rejected)") +
                        ": a git commit lands with its objects, refs and index or not at all; approve or reject " + shown + " whole");
      }) {}

void SelectionStream::Add(ReviewedChange item) {
  ++seen_;
  git_.Seen(item.root, item.change.path);
  const std::string prefix = sandbox_.PathPrefix(item.root);
  bool named = selectors_.empty();
  const std::string shown = DisplayPath(item.change, prefix);
  index_.ForEachNaming(shown, [&](size_t s) { named = used_[s] = true; });
  // A selector naming one half of a rename names the other too: a rename is decided whole.
  const std::string& partner = !item.renamed_from.empty() ? item.renamed_from : item.renamed_to;
  if (!named && !partner.empty()) named = index_.AnyNames(prefix + partner);
  if (named && approve_pending_ && MayApproveUnseen(item.change, index_, shown)) item.approval.ApprovePending();
  const bool taken = named && (item.approval.CommitsWhole() || item.approval.CommitsPart());

  // Directories whose part of the stream is over are done with; of those still open, the ones
  // above this change are its parents.
  std::erase_if(directories_, [&](const Directory& dir) {
    return dir.item.root != item.root || Past(item.change.path, dir.item.change.path);
  });
  if (taken) {
    // A change needs its parent directories live: new ones above it go along (outermost
    // first), unless the owner rejected one.
    for (auto& dir : directories_) {
      if (dir.taken || !Beneath(item.change.path, dir.item.change.path)) continue;
      if (dir.item.change.kind == ChangeKind::kModeChanged) continue;  // there live already
      if (dir.item.approval.State() == ReviewState::kRejected)
        throw Error(Code::kInvalidArgument, prefix + item.change.path + " is approved but the directory " + prefix +
                                                dir.item.change.path + " it needs is rejected; approve the directory or reject the file");
      // A directory that takes the place of a live file or symlink (a type change) would remove
      // that live entry: only what the owner approved lands (DESIGN, "Data safety").
      if (dir.item.change.kind == ChangeKind::kTypeChanged && !dir.item.approval.CommitsWhole())
        throw Error(Code::kInvalidArgument, prefix + item.change.path + " is approved but the directory " + prefix +
                                                dir.item.change.path + " it needs replaces a live " +
                                                std::string(ToString(dir.item.change.old_type)) +
                                                " that is not approved; approve the directory too, or reject the file");
      dir.taken = true;
      Emit(dir.item, {});
    }
    HunkPick hunks;
    if (!item.approval.CommitsAll()) hunks = item.approval.Approved();
    Emit(item, std::move(hunks));
  }
  if (!partner.empty()) {
    // Both halves taken: the commit moves the live entry (commit_planner.h).
    auto other = halves_.find({item.root, partner});
    if (other == halves_.end()) {
      halves_[{item.root, item.change.path}] = taken;
    } else {
      if (taken && other->second) {
        bool added = !item.renamed_from.empty();
        renames_[{item.root, added ? item.change.path : partner}] = added ? partner : item.change.path;
      }
      halves_.erase(other);
    }
  }
  if (item.change.new_type == EntryType::kDirectory && item.change.path != ".") {
    // (Kept in path order: the stream comes in it.)
    directories_.push_back({std::move(item), taken});
  }
}

void SelectionStream::Emit(const ReviewedChange& item, HunkPick hunks) {
  ++taken_;
  git_.Chosen(item.root, item.change.path, !hunks.empty());
  take_({item.root, item.change, std::move(hunks), item.approval});
}

TakenRenames SelectionStream::Finish() {
  for (size_t s = 0; s < selectors_.size(); ++s)
    if (!used_[s]) throw Error(Code::kNotFound, "no change at '" + api::ToString(selectors_[s]) + "' in sandbox " + sandbox_.id());
  git_.Finish();
  return std::move(renames_);
}

}  // namespace sandboxd
