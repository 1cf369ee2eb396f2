#pragma once
/// Landing areas: how a journaled commit reaches a root whose layers live on another file system
/// (no storage area could be used there, storage_area.h). Entries cannot be renamed across file
/// systems, so before anything is journaled the owner's sandboxd-helper copies what goes live
/// into ROOT/.sandboxd-commit-<sandbox>-<commit>/upper (made by the owner, mode 0700, synced);
/// the journaled steps then rename from there exactly as on any other root, replaced live
/// entries landing back in upper/ and removed ones in removed/. Once the commit is applied, the
/// daemon copies those backups into the commit's area in the state directory (keeping their
/// owners) and the landing area goes; an undo first copies them back into a fresh one. So the
/// area is in the live tree only while a commit or an undo runs, or until the next start-up
/// settles one that was cut off.
///
/// The daemon only ever reads there, through fds opened beneath the root without following
/// symlinks; everything written into the live tree is written by the helper as the owner
/// (helpers/landing_actions.h).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "unique_fd.h"
#include "model/commit_step.h"
#include "helper_clients/owner_helpers.h"

namespace sandboxd {

/// ".sandboxd-commit-<sandbox id>-<commit id>": the area's name in the root.
std::string LandingName(const std::string& sandbox_id, int64_t commit);

class LandingArea {
 public:
  /// The area `name` in the live root `live_root_fd` (an O_PATH fd the caller keeps open).
  LandingArea(OwnerHelpers& helpers, UserCredentials owner, int live_root_fd, std::string name, std::string shown_root);

  /// Makes the area, copies the contents of `stage_fd` (the commit's stage in the state
  /// directory) into its upper/ and syncs the root's file system. Refuses (kConflict) when
  /// something is at the area's name already.
  void Fill(int stage_fd) const;
  /// For an undo: makes the area afresh (removing what a cut-off import left) with copies of
  /// the commit's backups (`backup_fd`) in upper/ and of its removed entries (`removed_fd`) in
  /// removed/, and syncs.
  void Import(int backup_fd, int removed_fd) const;
  /// Copies upper/ and removed/ (the commit's backups, once it is applied) into the state
  /// directory's `backup_dir` and `removed_dir`, which are emptied first, keeping owners, and
  /// syncs them. Runs in the daemon, as root: only root can keep the owners. Idempotent: once
  /// done it leaves the mark `backup_dir`.evacuated beside them, and a later call (recovery of a
  /// commit cut off while the area was being removed) copies nothing again.
  void Evacuate(const std::string& backup_dir, const std::string& removed_dir) const;
  /// Removes the area, as the owner. Missing is fine. Returns "" or, when something in it could
  /// not be removed (an entry of another user's the commit set aside), a line for the log.
  std::string Remove() const;

  bool Exists() const;
  UniqueFd OpenUpper() const;    ///< O_PATH; throws Error when the area is not there
  UniqueFd OpenRemoved() const;  ///< O_PATH; throws Error when the area is not there

 private:
  void RunActions(const nlohmann::json& actions, const std::vector<int>& fds) const;
  UniqueFd OpenPart(const std::string& part) const;

  OwnerHelpers& helpers_;
  UserCredentials owner_;
  int live_root_fd_;
  std::string name_;
  std::string shown_;  ///< "/home/alice/proj/.sandboxd-commit-…", for messages
};

/// For an undo through a landing area: `steps` with the old inode of each step of root `root`
/// that set a live entry aside (a replaced entry in `upper_fd`, a removed one in `removed_fd`)
/// changed to that of its imported copy, which is what the steps now find there. Throws
/// Error(kFailed) naming the path when a copy is missing.
std::vector<CommitStep> RebaseOnImportedBackups(std::vector<CommitStep> steps, size_t root, int upper_fd, int removed_fd);

/// After an undo through a landing area put root `root`'s backups back live: for each backup in
/// the state directory that carries its original's inode number (Evacuate records it), the
/// entry now live at its path stands for that original. `backup_fd` and `removed_fd` are the
/// commit's backups and removed entries there (read as root), `live_fd` the root, `steps` the
/// commit's (they name the removed entries' paths).
std::vector<InodeAlias> RestoredAliases(int backup_fd, int removed_fd, int live_fd, size_t root,
                                        const std::vector<CommitStep>& steps);

}  // namespace sandboxd
