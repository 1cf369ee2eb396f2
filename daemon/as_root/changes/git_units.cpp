#include "changes/git_units.h"

#include "git_data.h"

namespace sandboxd {

void GitUnitTally::Seen(size_t root, const std::string& path) {
  // What git obeys inside the git directory (config, hooks) sorts among the data and is not of
  // it: only a path out of the git directory ends the repository's part of the stream.
  if (open_ && (root != unit_.root || path.compare(0, unit_.git_dir.size() + 1, unit_.git_dir + "/") != 0)) Close();
  auto place = api::GitDataOf(path);
  if (!place) return;
  if (!open_) {
    open_ = true;
    unit_ = GitUnit{.root = root, .git_dir = place->git_dir, .members = 0, .chosen = 0, .in_part = 0, .first_chosen = {}};
  }
  ++unit_.members;
}

void GitUnitTally::Chosen(size_t root, const std::string& path, bool in_part) {
  if (!open_ || root != unit_.root) return;
  auto place = api::GitDataOf(path);
  if (!place || place->git_dir != unit_.git_dir) return;
  if (unit_.first_chosen.empty()) unit_.first_chosen = path;
  ++(in_part ? unit_.in_part : unit_.chosen);
}

void GitUnitTally::Finish() {
  if (open_) Close();
}

void GitUnitTally::Close() {
  open_ = false;
  if (unit_.Partial()) partial_(unit_);
}

}  // namespace sandboxd
