#pragma once
/// Where a sandbox's pieces live on disk. State (root-only, 0700):
///   STATE/sandboxd.db, STATE/sandboxes/<id>/upper/<n>, STATE/sandboxes/<id>/work/<n>,
///   STATE/sandboxes/<id>/commits/<commit>/{upper,removed}/<n> (what commit <commit> replaced
///   or removed in root n: its backups; for a root that lands across file systems,
///   landing_area.h, upper/<n> keeps what went live and backup/<n> what it replaced),
///   STATE/trash/ (sandboxes being removed after their Destroy reply).
/// A sandbox with a hard quota (quota_layer.h) keeps its layers and the stages of its commits
/// in a file system of its own: the image STATE/quota/<id>.img, mounted at STATE/quota/<id>,
/// holding layers/{upper,work,commits/<commit>/upper}/<n>; what its commits replaced or
/// removed, and its archives, stay in its store as above.
/// A root on another file system than STATE keeps its layers and commit areas in the storage
/// area of that file system instead (storage_area.h), laid out the same: AREA/sandboxes/<id>/...,
/// AREA/trash/.
/// Runtime (host-visible merged views, the sandbox dir 0700 and owned by the owner):
///   RUN/<id>/<n>.
/// In user mode (sandboxd --user) there are no host-visible merged views (each job mounts its
/// overlays in namespaces of its own) and every layer lives in STATE.
/// Path arithmetic, and where the overlays over those paths are mounted (overlay_mounts.h:
/// the kernel's, unless a test says otherwise); it creates nothing.

#include <cstdint>
#include <string>

#include "sandbox/overlay_mounts.h"

namespace sandboxd {

class Layout {
 public:
  Layout(std::string state_dir, std::string run_dir, bool user_mode = false, OverlayMounts& mounts = KernelOverlayMounts())
      : state_dir_(std::move(state_dir)), run_dir_(std::move(run_dir)), user_mode_(user_mode), mounts_(&mounts) {}

  OverlayMounts& mounts() const { return *mounts_; }

  bool user_mode() const { return user_mode_; }
  const std::string& state_dir() const { return state_dir_; }
  const std::string& run_dir() const { return run_dir_; }
  std::string Database() const { return state_dir_ + "/sandboxd.db"; }
  std::string SandboxesDir() const { return state_dir_ + "/sandboxes"; }
  std::string TrashDir() const { return state_dir_ + "/trash"; }
  std::string SandboxDir(const std::string& id) const { return SandboxesDir() + "/" + id; }
  /// The same directories in `store`: a storage area, or STATE when "".
  std::string StoreDir(const std::string& store) const { return store.empty() ? state_dir_ : store; }
  std::string SandboxDirIn(const std::string& store, const std::string& id) const {
    return StoreDir(store) + "/sandboxes/" + id;
  }
  std::string TrashDirIn(const std::string& store) const { return StoreDir(store) + "/trash"; }
  /// Hard quotas' file systems: STATE/quota/<id>.img, mounted at STATE/quota/<id>.
  /// Captured output of jobs (captured_output.h): a file per job, removed with it.
  std::string OutputDir() const { return state_dir_ + "/output"; }
  std::string QuotaDir() const { return state_dir_ + "/quota"; }
  std::string QuotaImage(const std::string& id) const { return QuotaDir() + "/" + id + ".img"; }
  std::string QuotaMount(const std::string& id) const { return QuotaDir() + "/" + id; }
  std::string UpperDir(const std::string& id, size_t root) const { return SandboxDir(id) + "/upper/" + std::to_string(root); }
  std::string WorkDir(const std::string& id, size_t root) const { return SandboxDir(id) + "/work/" + std::to_string(root); }
  std::string CommitsDir(const std::string& id) const { return SandboxDir(id) + "/commits"; }
  std::string CommitDir(const std::string& id, int64_t commit) const { return CommitsDir(id) + "/" + std::to_string(commit); }
  std::string CommitRemovedDir(const std::string& id, int64_t commit, size_t root) const {
    return CommitDir(id, commit) + "/removed/" + std::to_string(root);
  }
  std::string CommitUpperDir(const std::string& id, int64_t commit, size_t root) const {
    return CommitDir(id, commit) + "/upper/" + std::to_string(root);
  }
  std::string RunSandboxDir(const std::string& id) const { return run_dir_ + "/" + id; }
  std::string MergedDir(const std::string& id, size_t root) const { return RunSandboxDir(id) + "/" + std::to_string(root); }

 private:
  std::string state_dir_;
  std::string run_dir_;
  bool user_mode_ = false;
  OverlayMounts* mounts_;
};

}  // namespace sandboxd
