#pragma once
/// Where a sandbox's parts are: its stores, layers, commit areas, archives and mounts. Path
/// arithmetic only, from its record and the daemon's layout: nothing here touches a file
/// system. A value the Sandbox keeps (Sandbox::paths()); the commit runner, suspension,
/// removal and usage read it.

#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/layout.h"

namespace sandboxd {

class SandboxPaths {
 public:
  /// `stores`: one per root ("" for the state directory); `hard_quota`: its layers are in a
  /// file system of their own (quota_layer.h).
  SandboxPaths(const Layout& layout, std::string id, std::vector<std::string> stores, bool hard_quota);

  /// Where root `root`'s layers and commit areas live: in the state directory, or in the
  /// storage area of the root's own file system (layout.h).
  const std::string& Store(size_t root) const { return stores_.at(root); }
  /// The sandbox's directory in that store.
  std::string StoreDir(size_t root) const { return layout_->SandboxDirIn(Store(root), id_); }
  /// Where root `root`'s layers and commit stages are: its StoreDir, or with a hard quota the
  /// layers directory in the quota's own file system.
  std::string StorageDir(size_t root) const;
  /// Each distinct StorageDir once, and with a hard quota each distinct StoreDir too (where its
  /// commits keep what they replaced or removed): every directory holding commit areas.
  std::vector<std::string> StorageDirs() const;
  /// Where Suspend keeps root `root`'s upper layer, as tar.zst (suspension.h): never in a hard
  /// quota's file system, which is freed meanwhile.
  std::string ArchivePath(size_t root) const { return StoreDir(root) + "/archive/" + std::to_string(root) + ".tar.zst"; }
  std::string UpperDir(size_t root) const { return StorageDir(root) + "/upper/" + std::to_string(root); }
  std::string WorkDir(size_t root) const { return StorageDir(root) + "/work/" + std::to_string(root); }
  /// Where root `root`'s overlay is mounted (the merged view; none in user mode).
  std::string MergedDir(size_t root) const { return layout_->MergedDir(id_, root); }
  /// The scratch home's layers (create --scratch-home): in the first root's store, never on a
  /// quota's file system (a suspend keeps them as they are, and they are no change).
  std::string ScratchHomeUpper() const { return StoreDir(0) + "/scratch-home/upper"; }
  std::string ScratchHomeWork() const { return StoreDir(0) + "/scratch-home/work"; }
  /// Where its overlay of the owner's home is mounted, beside the roots' merged views.
  std::string ScratchHomeMerged() const { return layout_->RunSandboxDir(id_) + "/home"; }
  /// Commit `commit`'s area for root `root` (one per storage directory, shared by its roots).
  std::string CommitDir(int64_t commit, size_t root) const { return StorageDir(root) + "/commits/" + std::to_string(commit); }
  std::string CommitUpperDir(int64_t commit, size_t root) const { return CommitDir(commit, root) + "/upper/" + std::to_string(root); }
  /// The commit area holding commit `commit`'s backups of root `root` (see CommitRemovedDir):
  /// never in a hard quota's file system, whose room is the owner's.
  std::string CommitBackupsDir(int64_t commit, size_t root) const {
    return hard_quota_ ? StoreDir(root) + "/commits/" + std::to_string(commit) : CommitDir(commit, root);
  }
  /// With a hard quota, what a commit removed or replaced is kept in the store, not in the
  /// quota's file system: its roots always land across file systems (landing_area.h), so these
  /// are copies made after the commit, and the live tree's backups must not eat the quota.
  std::string CommitRemovedDir(int64_t commit, size_t root) const {
    return CommitBackupsDir(commit, root) + "/removed/" + std::to_string(root);
  }
  /// Where the live entries a commit replaced are kept when they were set aside in a landing
  /// area (landing_area.h); CommitUpperDir then keeps what the commit put live.
  std::string CommitBackupDir(int64_t commit, size_t root) const {
    return CommitBackupsDir(commit, root) + "/backup/" + std::to_string(root);
  }

 private:
  const Layout* layout_;  // the daemon's, which outlives every sandbox
  std::string id_;
  std::vector<std::string> stores_;
  bool hard_quota_;
};

}  // namespace sandboxd
