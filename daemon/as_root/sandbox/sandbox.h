#pragma once
/// A sandbox as the daemon's domain sees it: its record and where its layers are, its overlays
/// (one per root), and reading its change set (the SandboxReader that changes/ and review/
/// take). Its gate and life are a part of their own (sandbox_gate.h, gate()). No D-Bus here.

#include <sys/types.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "model/change.h"
#include "sandbox/changeset_scanner.h"
#include "sandbox/content_verdicts.h"
#include "sandbox/layout.h"
#include "sandbox/operation_progress.h"
#include "sandbox/quota_layer.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_gate.h"
#include "sandbox/sandbox_paths.h"
#include "sandbox/sandbox_reader.h"
#include "store/store.h"

namespace sandboxd {

class Sandbox final : public SandboxReader {
 public:
  Sandbox(SandboxRecord record, const Layout& layout);

  const std::string& id() const override { return record_.id; }
  const std::string& name() const { return record_.name; }
  uid_t owner() const override { return record_.owner; }
  const std::vector<std::string>& roots() const override { return record_.roots; }
  int64_t created_usec() const override { return record_.created_usec; }
  /// When it was made, and so last used; only while it is being made (the registry's create,
  /// before it is stored or listed).
  void SetCreatedUsec(int64_t usec) { record_.created_usec = record_.last_used_usec = usec; }
  bool network() const { return record_.network; }
  bool shared() const { return record_.shared; }
  bool made_by_try() const { return record_.made_by_try; }
  bool scratch_home() const { return record_.scratch_home; }
  uint64_t quota_bytes() const { return record_.quota_bytes; }
  /// Whose the overlays' own reads and writes are (overlay.h), and a resume's restoring of the
  /// layers (archive_helper.h): the owner's user entry.
  UserCredentials OverlayIdentity() const;
  /// Its quota is a hard limit: its layers are in a file system of their own (quota_layer.h).
  bool hard_quota() const { return record_.hard_quota; }
  /// That file system (meaningful when hard_quota()).
  QuotaLayer quota_layer() const {
    return QuotaLayer(layout_.QuotaImage(record_.id), layout_.QuotaMount(record_.id), record_.quota_bytes, record_.owner);
  }
  uint64_t ttl_sec() const { return record_.ttl_sec; }
  const std::vector<std::string>& hide() const { return record_.hide; }
  const std::vector<std::string>& allow_sockets() const { return record_.allow_sockets; }
  const std::vector<network::HostRule>& allow_hosts() const { return record_.allow_hosts; }
  /// The whole record as it stands (its state included): what the store keeps of it.
  SandboxRecord record() const;
  /// When it was last used: a job's start or end, an operation's end (kept in memory; garbage
  /// collection records it in the store now and then).
  int64_t last_used_usec() const;
  /// Its gate (jobs, the exclusive operation, settling) and where it is in its life
  /// (sandbox_gate.h): what every verb takes before it touches the sandbox.
  SandboxGate& gate() { return gate_; }
  const SandboxGate& gate() const { return gate_; }
  /// "N/" for root N when the sandbox has more than one root, else "".
  std::string PathPrefix(size_t root) const override;

  /// Creates the upper, work and merged directories and mounts every root's overlay that is
  /// not mounted yet. Idempotent: used at create and at recovery. `opened` (at create: one
  /// descriptor per root, as its owner opened it; root_validation.h) is what the overlays are
  /// mounted from; without it (recovery, resume) each root is opened again by its path.
  void SetUp(const std::vector<int>& opened = {});
  /// The root of root `root`'s mounted overlay (for hard_links.h); none when it is not mounted
  /// (and never in user mode).
  UniqueFd OpenMergedView(size_t root) const;
  /// Whether every root's overlay is mounted (always, in user mode: each job mounts its own).
  /// A job runs only in a mounted sandbox: in a bare mount point its writes would land in the
  /// run dir, not in the sandbox.
  bool Mounted() const;
  /// After a job: removes the whiteouts overlayfs left in its index for files the job removed
  /// its copies of, which would make a live file coming back under another name unreadable in
  /// the sandbox (overlay_index.h). Mounted or not; errors are left to the next SetUp.
  void ForgetIndexWhiteouts() const;
  /// Mounts the file system that holds the layers when they have one of their own (a hard
  /// quota), making it when missing: before anything reads or writes the layers. Else nothing.
  void MountLayers();
  /// Unmounts that file system, for a sandbox whose layers are freed (suspended); in use, it is
  /// detached and goes when its last user does. Else nothing.
  void ReleaseLayers();
  /// Removes that file system and its image, for a sandbox that is gone. Else nothing.
  void RemoveQuotaLayer();
  /// Unmounts every root's overlay. Throws Error(kBusy) if one is in use. Layers that are kept
  /// (a commit, undo or suspend reads them next) are first given every name of an inode that
  /// the merged views show (hard_links.h; its errors are thrown); discarded ones are not. With
  /// a hard quota, the room its file system keeps beyond the quota is freed for the operation
  /// that follows (a commit's stage may need it); the next SetUp takes it back.
  enum class Layers { kKept, kDiscarded };
  void Unmount(Layers layers = Layers::kKept);
  /// Unmount(kKept), on a thread of its own where no name waits to be linked up (no root's
  /// index holds a copy), else here: the kernel's teardown of an overlay drops every dentry and
  /// inode a job left cached (400 ms after a job of 100,000 new files), and a commit meanwhile
  /// reads the layers themselves, never the merged views. get() waits for it and throws its
  /// error; nothing may move the layers' entries before.
  std::future<void> UnmountBeside();
  /// Whether root `root`'s overlay index links every copy-up its upper holds (begun with an
  /// empty upper; never after a resume, nor in user mode): then an upper entry with one link
  /// carries no overlay mark.
  bool IndexCoversUpper(size_t root) const;
  /// Unmounts every root's overlay, and the scratch home's, for good: one still in use (a
  /// shell of the owner's sitting in the merged view) is detached and goes when its last user
  /// leaves.
  void UnmountForGood();
  /// Empties the upper and work layers (while unmounted): every change is gone. A hard quota's
  /// file system is released after (the sandbox is suspended).
  void ClearLayers();
  /// The same at once: the layers are renamed into their store's trash (one rename each), where
  /// SandboxRegistry::EmptyTrash deletes them later, off the caller's time. With a hard quota
  /// they are deleted in place (no trash on their file system; they hold the quota at most).
  void TrashLayers();

  /// The change set, per root, read from the upper layers, after they are given (hard_links.h)
  /// every name of their files that the merged views show (where it can; what it cannot is
  /// left to the Unmount of a commit, undo or suspend, which refuses then).
  std::vector<RootChanges> Scan() const;
  size_t CountChanges() const;
  /// The same without holding the change set, in two steps per root: PrepareStream gives root
  /// `root` its linked-up names as Scan does and returns the changes a reader may need before
  /// the stream (the deletions of files and symlinks: the halves of renames, a few); then
  /// StreamChanges hands out its change set one change at a time (changeset_scanner.h).
  std::vector<Change> PrepareStream(size_t root) const override;
  void StreamChanges(size_t root, const ChangeVisitor& visit) const override;
  /// For a settling that looks at touched paths alone (job_settling.h): links up the names of
  /// root `root` that `candidates` (changes among them: deleted files, and files the upper has
  /// under more than one name, `multi_linked`) leave out, as PrepareStream does for a whole
  /// change set; `lower_fd` and `upper_fd` are the root's. True when any was linked up.
  bool LinkUpTouched(size_t root, int lower_fd, int upper_fd, const std::vector<Change>& candidates,
                     const std::set<std::string>& multi_linked) const;
  /// StreamChanges with each change's upper ctime (ScanChangesTimed).
  void StreamChangesTimed(size_t root, const TimedChangeVisitor& visit) const override;

  /// Told of the names of root `root` that a scan or an unmount linked up (hard_links.h): from
  /// then on the sandbox holds its own copy under them, which no longer follows the live tree.
  using LinkedUp = std::function<void(const Sandbox&, size_t root, const std::vector<std::string>& paths)>;
  void SetLinkedUp(LinkedUp linked_up) { linked_up_ = std::move(linked_up); }

  /// Opens the live root refusing symlinks on the way (its canonical path has none). Refuses
  /// with Error(kInvalidState) a directory that is not the one the sandbox was made over (its
  /// file handle is not the record's): whoever can rename in the root's parent could otherwise
  /// put a directory of theirs at its path and have the owner's commit write into it. During an
  /// exclusive operation, each root is opened once, at its first use, and every later opening
  /// is that same directory: no part of a commit or undo acts on a directory swapped in half-way.
  UniqueFd OpenLiveRoot(size_t root) const override;
  /// For a sandbox made before records kept its roots' handles: takes them from the roots as
  /// they are now (called once its overlays are mounted, which checked each root against the
  /// upper's record of it where overlayfs keeps one). Returns whether any was missing.
  bool FillMissingRootHandles();
  UniqueFd OpenUpper(size_t root) const override;
  /// Whose eyes the live tree is read with wherever the daemon compares it with the sandbox (its
  /// change set, sights and conflicts): the owner's, as the overlays' (DESIGN, "Security model").
  UserCredentials LiveIdentity() const override { return OverlayIdentity(); }
  /// Where its stores, layers, commit areas, archives and mounts are (sandbox_paths.h).
  const SandboxPaths& paths() const { return paths_; }
  /// Whether root `root`'s layers are on another file system than the root itself (no storage
  /// area could be used there): its commits then go through a landing area.
  bool LandsAcrossFileSystems(size_t root) const;

  // SandboxReader's waits and checks, which are the gate's.
  void CheckActive(const std::string& verb) const override { gate_.CheckActive(verb); }
  void WaitSettled(const std::string& verb) const override { gate_.WaitSettled(verb); }
  void WaitSettledThrough(const std::pair<size_t, std::string>& key, const std::string& verb) const override {
    gate_.WaitSettledThrough(key, verb);
  }
  unsigned running_jobs() const override { return gate_.running_jobs(); }

 private:
  /// Mounts the overlay of the owner's home whose layers are the scratch home's, unless it is.
  void SetUpScratchHome(const UserCredentials& owner);
  /// With a hard quota and no overlay mounted: sizes the room in the layers' file system to
  /// the quota less what the upper layers hold (QuotaLayer::Fit).
  void FitQuotaLayer();
  /// What LinkUpHardLinks looks at, from one scan that holds nothing else (with
  /// link_up_mutex_ held): deleted files, and files the upper has under more than one name
  /// (`multi_linked` receives every such name). `deletions`, when given, receives the deleted
  /// files and symlinks (rename candidates, PrepareStream).
  std::vector<Change> ScanLinkUpCandidates(int lower_fd, int upper_fd, std::set<std::string>& multi_linked,
                                           std::vector<Change>* deletions) const;
  /// Whether root `root`'s merged view is mounted (link-up works through it).
  bool MergedViewMounted(size_t root) const;
  /// For Scan and PrepareStream (with link_up_mutex_ held): links up the names `changes` (read
  /// with `multi_linked`) leave out, where the merged view is mounted, and tells linked_up_.
  /// A failure is left for the unmount of a commit to refuse. True when any was linked up.
  bool LinkUpForReading(size_t root, int lower_fd, int upper_fd, const std::vector<Change>& changes,
                        const std::set<std::string>& multi_linked) const;
  /// The refusal of a root that is no longer the directory the sandbox was made over.
  Error ReplacedRoot(size_t root) const;


  SandboxRecord record_;
  const Layout& layout_;
  SandboxPaths paths_;
  /// Guards record_'s root handles (FillMissingRootHandles) and last use.
  mutable std::mutex mutex_;
  SandboxGate gate_;
  LinkedUp linked_up_;
  /// One scan-and-link-up at a time (Scan, Unmount): a scan that found a name missing from the
  /// upper while another scan linked it up would skip the rescan and list the change set
  /// without that name (seen: `changes` right after a job, racing the job's after-job scan).
  mutable std::mutex link_up_mutex_;
  /// Held through SetUp: jobs starting together in an unmounted sandbox mount it once.
  std::mutex set_up_mutex_;
  mutable ContentVerdicts verdicts_;  ///< what scans learnt of same-size files' content
};

}  // namespace sandboxd
