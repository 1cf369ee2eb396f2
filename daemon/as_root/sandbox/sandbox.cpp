#include "sandbox/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>

#include "base/directory_listing.h"
#include "base/errors.h"
#include "runtime/clock.h"
#include "runtime/file_clock.h"
#include "runtime/file_handle.h"
#include "base/fs_util.h"
#include "base/overlay.h"
#include "sandbox/changeset_scanner.h"
#include "sandbox/hard_links.h"
#include "sandbox/live_sight.h"
#include "sandbox/overlay_index.h"
#include "sandbox/usage.h"

namespace sandboxd {

namespace {

/// The record as a Sandbox keeps it: one store and one handle per root (records written before
/// storage areas had none: all in STATE; and before handles were kept: unknown).
SandboxRecord Completed(SandboxRecord record) {
  record.stores.resize(record.roots.size());
  record.root_handles.resize(record.roots.size());
  return record;
}

}  // namespace

Sandbox::Sandbox(SandboxRecord record, const Layout& layout)
    : record_(Completed(std::move(record))),
      layout_(layout),
      paths_(layout, record_.id, record_.stores, record_.hard_quota),
      gate_(record_.id, record_.state) {}

bool Sandbox::LandsAcrossFileSystems(size_t root) const {
  struct stat storage_st, live_st;
  UniqueFd live = OpenLiveRoot(root);
  if (stat(paths_.StorageDir(root).c_str(), &storage_st) != 0 || fstat(live.get(), &live_st) != 0)
    ThrowErrno("cannot stat root " + record_.roots.at(root) + " or its storage");
  return storage_st.st_dev != live_st.st_dev;
}

SandboxRecord Sandbox::record() const {
  SandboxRecord record;
  {
    std::lock_guard lock(mutex_);
    record = record_;
  }
  record.state = gate_.state();  // the gate keeps it from the start
  return record;
}

std::string Sandbox::PathPrefix(size_t root) const {
  return record_.roots.size() > 1 ? std::to_string(root) + "/" : std::string();
}

namespace {

/// Whether directory `dir` holds entries (true when unsure, false when it does not exist). Of a
/// root's overlay index: without an entry no copy of a live file was made through it, so no
/// name of the sandbox waits to be linked up (hard_links.h).
bool HasEntries(const std::string& dir) {
  UniqueFd opened(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!opened) return errno != ENOENT;  // unsure: look
  DirectoryListing listing = DirectoryListing::Of(opened.get());
  return !listing || listing.Next() != nullptr;
}

/// On a root's work directory: its index was begun with an empty upper (SetUp).
constexpr const char* kIndexCoversUpper = "trusted.sandboxd.index_covers_upper";

}  // namespace

bool Sandbox::Mounted() const {
  for (size_t i = 0; i < record_.roots.size() && !layout_.user_mode(); ++i)
    if (!layout_.mounts().IsMounted(layout_.MergedDir(record_.id, i))) return false;
  return true;
}

void Sandbox::SetUp(const std::vector<int>& opened) {
  std::lock_guard set_up(set_up_mutex_);
  if (!opened.empty() && opened.size() != record_.roots.size())
    throw Error(Code::kFailed, "sandbox " + record_.id + ": " + std::to_string(opened.size()) + " opened roots for " +
                                   std::to_string(record_.roots.size()) + " roots");
  const std::string& id = record_.id;
  MountLayers();
  for (const auto& dir : paths_.StorageDirs()) MakeDirectory(dir, 0700);
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    MakeDirectory(paths_.StorageDir(i) + "/upper", 0700);
    MakeDirectory(paths_.StorageDir(i) + "/work", 0700);
  }
  FitQuotaLayer();
  // The merged views are host-visible; only the owner may enter them. In user mode there are
  // none: each job mounts the overlays in its own namespaces (user_overlay_main.cpp).
  if (!layout_.user_mode()) MakeDirectory(layout_.RunSandboxDir(id), 0700, record_.owner, kOwnId);
  UserCredentials owner = OverlayIdentity();
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    std::string merged = layout_.MergedDir(id, i);
    if (!layout_.user_mode() && layout_.mounts().IsMounted(merged)) continue;
    // At create, the directory the owner opened and was checked on, never its name looked up
    // again: by now the name may lead elsewhere (a symlink on the way swapped for another).
    UniqueFd reopened;
    int lower = opened.empty() ? (reopened = OpenLiveRoot(i)).get() : opened[i];
    struct stat st;
    if (fstat(lower, &st) != 0) ThrowErrno("cannot stat root " + record_.roots[i]);
    // The overlay's root directory takes its owner and mode from the upper's root, so the upper
    // starts as a copy of the live root's attributes: a job sees its root unchanged.
    // An unprivileged daemon (user mode) keeps its own ids: it may not give the upper a group
    // it is not in (a shared project's), and the job's user namespace maps no other id anyway.
    std::string upper = paths_.UpperDir(i);
    if (access(upper.c_str(), F_OK) != 0) {
      // A layer made anew, its predecessor gone (lost, or taken whole by a commit): an index left
      // in the work dir names that one's root, and overlayfs would refuse the new one over it
      // (ESTALE, "failed to verify index dir"). Before, only a job in the bare, unmounted merged
      // dir hid that (a job now mounts its sandbox first).
      // Made whole (MakeDirectoryWhole): once there, it is never made again, so a kill that
      // left it bare would have locked its owner out of the merged view for good.
      RemoveTree(paths_.WorkDir(i));
      MakeDirectoryWhole(upper, st.st_mode & 07777, layout_.user_mode() ? kOwnId : st.st_uid, layout_.user_mode() ? kOwnId : st.st_gid);
    }
    bool work_made = access(paths_.WorkDir(i).c_str(), F_OK) != 0;
    MakeDirectory(paths_.WorkDir(i), 0700);
    if (layout_.user_mode()) continue;
    // An index begun with an empty upper links every copy-up the upper will hold (nfs_export=on
    // indexes each): one the upper holds under one name was never copied up and carries no
    // overlay mark (IndexCoversUpper). Not so after a resume: the archive kept the upper's
    // copies with their marks, not the index.
    // Nor once overlayfs has had the chance to drop a stale entry (its live original gone) at a
    // mount, which leaves that copy one link and its marks: a remount over index entries.
    if (work_made && !HasEntries(upper))
      setxattr(paths_.WorkDir(i).c_str(), kIndexCoversUpper, "1", 1, 0);  // (where it cannot be set: look at all)
    else if (!work_made && HasEntries(paths_.WorkDir(i) + "/index"))
      removexattr(paths_.WorkDir(i).c_str(), kIndexCoversUpper);
    if (std::string index = paths_.WorkDir(i) + "/index"; access(index.c_str(), F_OK) == 0)
      ForgetDeadIndexEntries(OpenDirectoryNoSymlinks(index, O_RDONLY).get(), true);
    MakeDirectory(merged, 0700, record_.owner, kOwnId);
    try {
      layout_.mounts().Mount({lower, upper, paths_.WorkDir(i), merged, /*user_xattr=*/false, &owner});
    } catch (const Error& e) {
      // Told about the root and the sandbox the caller knows, not our mount point.
      if (e.code() == Code::kInvalidState) throw ReplacedRoot(i);
      throw Error(e.code(), "cannot mount root " + record_.roots[i] + " of sandbox " + id + ": " + e.what());
    }
  }
  if (record_.scratch_home && !layout_.user_mode()) SetUpScratchHome(owner);
}

void Sandbox::SetUpScratchHome(const UserCredentials& owner) {
  const std::string merged = paths_.ScratchHomeMerged();
  if (layout_.mounts().IsMounted(merged)) return;
  if (owner.home.empty()) throw Error(Code::kFailed, "sandbox " + record_.id + ": its owner uid " + std::to_string(record_.owner) + " has no home");
  // By its path (from the user database, not the caller): a home that is not the owner's
  // directory any more is not overlaid.
  UniqueFd home(open(owner.home.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!home) ThrowErrno("cannot open the home " + owner.home + " for the scratch home of sandbox " + record_.id);
  struct stat st;
  if (fstat(home.get(), &st) != 0) ThrowErrno("cannot stat the home " + owner.home);
  if (st.st_uid != record_.owner)
    throw Error(Code::kInvalidState, "the home " + owner.home + " is not uid " + std::to_string(record_.owner) + "'s: sandbox " + record_.id +
                                         " gives it no scratch home");
  MakeDirectory(paths_.StoreDir(0) + "/scratch-home", 0700);
  // Made as the home is, so that the job sees its home's root unchanged (as a root's upper).
  if (access(paths_.ScratchHomeUpper().c_str(), F_OK) != 0) {
    RemoveTree(paths_.ScratchHomeWork());
    MakeDirectoryWhole(paths_.ScratchHomeUpper(), st.st_mode & 07777, st.st_uid, st.st_gid);
  }
  MakeDirectory(paths_.ScratchHomeWork(), 0700);
  MakeDirectory(merged, 0700, record_.owner, kOwnId);
  try {
    layout_.mounts().Mount({home.get(), paths_.ScratchHomeUpper(), paths_.ScratchHomeWork(), merged, /*user_xattr=*/false, &owner});
  } catch (const Error& e) {
    throw Error(e.code(), "cannot mount the scratch home " + owner.home + " of sandbox " + record_.id + ": " + e.what());
  }
}

void Sandbox::FitQuotaLayer() {
  // Only while no overlay is mounted: no job writes meanwhile, and an image that must grow is
  // unmounted for it.
  if (!record_.hard_quota) return;
  for (size_t i = 0; i < record_.roots.size(); ++i)
    if (layout_.mounts().IsMounted(layout_.MergedDir(record_.id, i))) return;
  // The core library has no logger (its helpers link it too): the daemon's stderr is its log.
  if (std::string line = quota_layer().Fit(ChangesBytes(*this)); !line.empty())
    std::fprintf(stderr, "sandbox %s: %s\n", record_.id.c_str(), line.c_str());
}

void Sandbox::ForgetIndexWhiteouts() const {
  if (layout_.user_mode()) return;  // each job's own overlay, with index=off
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    UniqueFd index(open((paths_.WorkDir(i) + "/index").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (index) ForgetDeadIndexEntries(index.get(), false);
  }
}

void Sandbox::MountLayers() {
  if (record_.hard_quota) quota_layer().Mount();
}

void Sandbox::ReleaseLayers() {
  if (!record_.hard_quota) return;
  try {
    quota_layer().Unmount();
  } catch (const Error& e) {
    if (e.code() != Code::kBusy) throw;
    // Held by a job's namespace that has not gone yet: it goes with it. A later mount finds the
    // loop device still serving the image and shares its file system (loop_device.h).
    umount2(layout_.QuotaMount(record_.id).c_str(), UMOUNT_NOFOLLOW | MNT_DETACH);
  }
}

void Sandbox::RemoveQuotaLayer() {
  if (record_.hard_quota) quota_layer().Remove();
}

UserCredentials Sandbox::OverlayIdentity() const {
  try {
    return LookupUser(record_.owner);
  } catch (const Error&) {
    // An owner whose user entry is gone keeps their uid, and no group is theirs: the sandbox
    // can still be mounted to be looked at, committed or destroyed by someone allowed to.
    UserCredentials orphan;
    orphan.uid = record_.owner;
    orphan.gid = 65534;
    return orphan;
  }
}


void Sandbox::Unmount(Layers layers) {
  for (size_t i = 0; i < record_.roots.size() && layers == Layers::kKept; ++i) {
    UniqueFd merged = OpenMergedView(i);
    if (!merged) continue;
    UniqueFd live;
    try {
      live = OpenLiveRoot(i);
    } catch (const Error&) {
      continue;  // gone from the live tree: nothing of it can go live, as what follows will say
    }
    // Nothing to link up without a copy in the index (a job that only made new files): no scan.
    if (!HasEntries(paths_.WorkDir(i) + "/index")) continue;
    UniqueFd upper = OpenUpper(i);
    std::lock_guard link_up(link_up_mutex_);
    // Only what link-up looks at is held, never the change set (a million changes at a commit).
    std::set<std::string> multi_linked;
    auto candidates = ScanLinkUpCandidates(live.get(), upper.get(), multi_linked, nullptr);
    auto linked = LinkUpHardLinks(live.get(), upper.get(), merged.get(), candidates, &multi_linked);
    if (!linked.empty() && linked_up_) linked_up_(*this, i, linked);
  }
  for (size_t i = 0; i < record_.roots.size(); ++i) layout_.mounts().Unmount(layout_.MergedDir(record_.id, i));
  if (record_.hard_quota) quota_layer().FreeReserve();
}

bool Sandbox::IndexCoversUpper(size_t root) const {
  char value[1];
  return !layout_.user_mode() && lgetxattr(paths_.WorkDir(root).c_str(), kIndexCoversUpper, value, sizeof value) == 1;
}

std::future<void> Sandbox::UnmountBeside() {
  bool links_up = false;
  for (size_t i = 0; i < record_.roots.size() && !layout_.user_mode(); ++i) links_up |= HasEntries(paths_.WorkDir(i) + "/index");
  // Link-up reads the merged views, as PrepareStream does where the index holds copies: an
  // unmount beside them would find them busy.
  if (links_up) {
    Unmount();
    std::promise<void> done;
    done.set_value();
    return done.get_future();
  }
  return std::async(std::launch::async, [this] { Unmount(); });
}

void Sandbox::UnmountForGood() {
  std::vector<std::string> mounted;
  for (size_t i = 0; i < record_.roots.size(); ++i) mounted.push_back(layout_.MergedDir(record_.id, i));
  if (record_.scratch_home && !layout_.user_mode()) mounted.push_back(paths_.ScratchHomeMerged());
  for (const auto& merged : mounted) {
    try {
      layout_.mounts().Unmount(merged);
    } catch (const Error& e) {
      if (e.code() != Code::kBusy) throw;
      layout_.mounts().Detach(merged);
    }
  }
}

void Sandbox::ClearLayers() {
  MountLayers();
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    RemoveTree(paths_.UpperDir(i));
    RemoveTree(paths_.WorkDir(i));
  }
  ReleaseLayers();
}

void Sandbox::TrashLayers() {
  if (record_.hard_quota) {
    for (size_t i = 0; i < record_.roots.size(); ++i) {
      RemoveTree(paths_.UpperDir(i));
      RemoveTree(paths_.WorkDir(i));
    }
    return;
  }
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    std::string trash = layout_.TrashDirIn(paths_.Store(i));
    MakeDirectory(trash, 0700);
    for (const auto& layer : {paths_.UpperDir(i), paths_.WorkDir(i)}) {
      std::string to = trash + "/" + record_.id + "-" + RandomId();
      // Where the rename cannot be made (the trash just emptied away), the slow way.
      if (rename(layer.c_str(), to.c_str()) != 0 && errno != ENOENT) RemoveTree(layer);
    }
  }
}

UniqueFd Sandbox::OpenMergedView(size_t root) const {
  if (layout_.user_mode()) return {};  // no merged view outside each job's own namespaces
  std::string merged = layout_.MergedDir(record_.id, root);
  if (!layout_.mounts().IsMounted(merged)) return {};
  UniqueFd merged_fd = OpenDirectoryNoSymlinks(merged, O_RDONLY);
  struct statfs fs;
  if (fstatfs(merged_fd.get(), &fs) != 0 || fs.f_type != OVERLAYFS_SUPER_MAGIC) return {};  // unmounted meanwhile
  return merged_fd;
}

std::vector<RootChanges> Sandbox::Scan() const {
  std::vector<RootChanges> result;
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    UniqueFd lower = OpenLiveRoot(i);
    UniqueFd upper = OpenUpper(i);
    std::lock_guard link_up(link_up_mutex_);
    std::set<std::string> multi_linked;
    UserCredentials owner = LiveIdentity();
    auto changes = ScanChanges(lower.get(), upper.get(), owner, &verdicts_, &multi_linked);
    bool linked = LinkUpForReading(i, lower.get(), upper.get(), changes, multi_linked);
    result.push_back({i, linked ? ScanChanges(lower.get(), upper.get(), owner, &verdicts_) : std::move(changes)});
  }
  return result;
}


bool Sandbox::MergedViewMounted(size_t root) const {
  try {
    return static_cast<bool>(OpenMergedView(root));
  } catch (const Error&) {
    return false;  // its directory is gone: nothing mounted there
  }
}

std::vector<Change> Sandbox::PrepareStream(size_t root) const {
  UniqueFd lower = OpenLiveRoot(root);
  UniqueFd upper = OpenUpper(root);
  std::lock_guard link_up(link_up_mutex_);
  // Nothing to link up (the common case: a job that made new files), or nothing to link it up
  // through (the merged view is unmounted: what a commit, undo or suspend reads after its
  // Unmount linked up everything): a walk for the deletions alone, which reads no file's
  // metadata. A full scan here was two of the five walks of the change set in a commit.
  if (layout_.user_mode() || !HasEntries(paths_.WorkDir(root) + "/index") || !MergedViewMounted(root)) {
    std::vector<Change> deletions;
    for (auto& change : ScanDeletions(lower.get(), upper.get(), LiveIdentity()))
      if (change.old_type == EntryType::kFile || change.old_type == EntryType::kSymlink) deletions.push_back(std::move(change));
    return deletions;
  }
  // What LinkUpHardLinks looks at (deleted files, files with more than one link) and what a
  // rename pairs (deleted files and symlinks): few, whatever the size of the change set.
  std::set<std::string> multi_linked;
  std::vector<Change> deletions;
  auto kept = ScanLinkUpCandidates(lower.get(), upper.get(), multi_linked, &deletions);
  LinkUpForReading(root, lower.get(), upper.get(), kept, multi_linked);
  return deletions;
}

bool Sandbox::LinkUpTouched(size_t root, int lower_fd, int upper_fd, const std::vector<Change>& candidates,
                            const std::set<std::string>& multi_linked) const {
  std::lock_guard link_up(link_up_mutex_);
  // As PrepareStream: no copy in the index, nothing to link; no merged view, nothing to link through.
  if (layout_.user_mode() || !HasEntries(paths_.WorkDir(root) + "/index") || !MergedViewMounted(root)) return false;
  return LinkUpForReading(root, lower_fd, upper_fd, candidates, multi_linked);
}

std::vector<Change> Sandbox::ScanLinkUpCandidates(int lower_fd, int upper_fd, std::set<std::string>& multi_linked,
                                                  std::vector<Change>* deletions) const {
  std::vector<Change> kept;
  ScanChanges(lower_fd, upper_fd, LiveIdentity(), [&](Change&& change) {
    bool deleted = change.kind == ChangeKind::kDeleted && (change.old_type == EntryType::kFile || change.old_type == EntryType::kSymlink);
    if (deleted && deletions) deletions->push_back(change);
    if ((deleted && change.old_type == EntryType::kFile) || multi_linked.count(change.path)) kept.push_back(std::move(change));
  }, &verdicts_, &multi_linked);
  return kept;
}

bool Sandbox::LinkUpForReading(size_t root, int lower_fd, int upper_fd, const std::vector<Change>& changes,
                               const std::set<std::string>& multi_linked) const {
  std::vector<std::string> linked;
  try {
    UniqueFd merged = OpenMergedView(root);
    if (merged) linked = LinkUpHardLinks(lower_fd, upper_fd, merged.get(), changes, &multi_linked);
  } catch (const Error&) {
    // A name that cannot be linked up now (a full layer) is not listed yet: the change set must
    // still be readable. The commit links up again before it unmounts, and refuses then.
  }
  if (!linked.empty() && linked_up_) linked_up_(*this, root, linked);
  return !linked.empty();
}

void Sandbox::StreamChanges(size_t root, const ChangeVisitor& visit) const {
  StreamChangesTimed(root, [&](Change&& change, const UpperEntry&) { visit(std::move(change)); });
}

void Sandbox::StreamChangesTimed(size_t root, const TimedChangeVisitor& visit) const {
  UniqueFd lower = OpenLiveRoot(root);
  UniqueFd upper = OpenUpper(root);
  ScanChangesTimed(lower.get(), upper.get(), LiveIdentity(), visit, &verdicts_);
}

size_t Sandbox::CountChanges() const {
  size_t count = 0;
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    PrepareStream(i);
    StreamChanges(i, [&](Change&&) { ++count; });
  }
  return count;
}

Error Sandbox::ReplacedRoot(size_t root) const {
  return Error(Code::kInvalidState, "root " + record_.roots.at(root) + " of sandbox " + record_.id +
                                        " is no longer the directory the sandbox was made over (it was replaced in the live "
                                        "tree); put that directory back at its path to use the sandbox");
}

UniqueFd Sandbox::OpenLiveRoot(size_t root) const {
  if (auto kept = gate_.OperationRoot(root)) return std::move(*kept);
  std::string recorded;
  {
    std::lock_guard lock(mutex_);
    recorded = record_.root_handles.at(root);
  }
  UniqueFd live = OpenDirectoryNoSymlinks(record_.roots.at(root), O_PATH);
  // A directory whose file system gave a handle at create and gives none now is on another file
  // system: not the one either.
  if (!recorded.empty() && FileHandleText(live.get()) != recorded) throw ReplacedRoot(root);
  return gate_.KeepOperationRoot(root, std::move(live));
}

bool Sandbox::FillMissingRootHandles() {
  bool filled = false;
  for (size_t i = 0; i < record_.roots.size(); ++i) {
    if (!record_.root_handles[i].empty()) continue;
    std::string handle = FileHandleText(OpenLiveRoot(i).get());
    if (handle.empty()) continue;  // its file system gives none
    std::lock_guard lock(mutex_);
    record_.root_handles[i] = std::move(handle);
    filled = true;
  }
  return filled;
}

UniqueFd Sandbox::OpenUpper(size_t root) const {
  return OpenDirectoryNoSymlinks(paths_.UpperDir(root), O_PATH);
}

int64_t Sandbox::last_used_usec() const {
  int64_t recorded;
  {
    std::lock_guard lock(mutex_);
    recorded = record_.last_used_usec;
  }
  return std::max(gate_.last_used_usec(), recorded);
}

}  // namespace sandboxd
