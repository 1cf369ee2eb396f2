#pragma once
/// A sandbox as the daemon's domain sees it: its record, its overlays (one per root), the gate
/// that keeps jobs and whole-sandbox operations (commit, discard, destroy) from overlapping,
/// and reading its change set. No D-Bus here.

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
#include "store/store.h"

namespace sandboxd {

struct RootChanges {
  size_t root = 0;
  std::vector<Change> changes;
};

/// The changes of `items` (anything with a `root` and a `change`, in scan order), grouped by
/// root in that order.
template <typename Items>
std::vector<RootChanges> ChangesByRoot(const Items& items) {
  std::vector<RootChanges> changes;
  for (const auto& item : items) {
    if (changes.empty() || changes.back().root != item.root) changes.push_back({item.root, {}});
    changes.back().changes.push_back(item.change);
  }
  return changes;
}

class Sandbox {
 public:
  Sandbox(SandboxRecord record, const Layout& layout);

  const std::string& id() const { return record_.id; }
  const std::string& name() const { return record_.name; }
  uid_t owner() const { return record_.owner; }
  const std::vector<std::string>& roots() const { return record_.roots; }
  int64_t created_usec() const { return record_.created_usec; }
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
  /// Active or suspended, or suspending/resuming while it changes (suspension.h).
  SandboxState state() const;
  /// Sets the state in memory (the caller records it in the store first).
  void SetState(SandboxState state);
  bool active() const { return state() == SandboxState::kActive; }
  /// "N/" for root N when the sandbox has more than one root, else "".
  std::string PathPrefix(size_t root) const;

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
  std::vector<Change> PrepareStream(size_t root) const;
  void StreamChanges(size_t root, const ChangeVisitor& visit) const;
  /// For a settling that looks at touched paths alone (job_settling.h): links up the names of
  /// root `root` that `candidates` (changes among them: deleted files, and files the upper has
  /// under more than one name, `multi_linked`) leave out, as PrepareStream does for a whole
  /// change set; `lower_fd` and `upper_fd` are the root's. True when any was linked up.
  bool LinkUpTouched(size_t root, int lower_fd, int upper_fd, const std::vector<Change>& candidates,
                     const std::set<std::string>& multi_linked) const;
  /// StreamChanges with each change's upper ctime (ScanChangesTimed).
  void StreamChangesTimed(size_t root, const TimedChangeVisitor& visit) const;

  /// Told of the names of root `root` that a scan or an unmount linked up (hard_links.h): from
  /// then on the sandbox holds its own copy under them, which no longer follows the live tree.
  using LinkedUp = std::function<void(const Sandbox&, size_t root, const std::vector<std::string>& paths)>;
  void SetLinkedUp(LinkedUp linked_up) { linked_up_ = std::move(linked_up); }
  /// Where the progress of its long operations (commit, undo, suspend, resume) goes
  /// (operation_progress.h); none: nowhere. Set by the sandbox's face while it is published.
  void SetProgressSink(ProgressSink sink);
  /// The figures of the exclusive operation under way, from its own thread (or one it waits
  /// for); nothing when it reports no progress.
  void ReportProgress(const ProgressFigures& figures) const;
  void AdvanceProgress(uint64_t entries, uint64_t bytes = 0) const;

  /// Opens the live root refusing symlinks on the way (its canonical path has none). Refuses
  /// with Error(kInvalidState) a directory that is not the one the sandbox was made over (its
  /// file handle is not the record's): whoever can rename in the root's parent could otherwise
  /// put a directory of theirs at its path and have the owner's commit write into it. During an
  /// exclusive operation, each root is opened once, at its first use, and every later opening
  /// is that same directory: no part of a commit or undo acts on a directory swapped in half-way.
  UniqueFd OpenLiveRoot(size_t root) const;
  /// For a sandbox made before records kept its roots' handles: takes them from the roots as
  /// they are now (called once its overlays are mounted, which checked each root against the
  /// upper's record of it where overlayfs keeps one). Returns whether any was missing.
  bool FillMissingRootHandles();
  UniqueFd OpenUpper(size_t root) const;
  /// Whose eyes the live tree is read with wherever the daemon compares it with the sandbox (its
  /// change set, sights and conflicts): the owner's, as the overlays' (DESIGN, "Security model").
  UserCredentials LiveIdentity() const { return OverlayIdentity(); }
  std::string MergedDir(size_t root) const { return layout_.MergedDir(record_.id, root); }

  /// Where root `root`'s layers and commit areas live: in the state directory, or in the
  /// storage area of the root's own file system (layout.h).
  const std::string& Store(size_t root) const { return record_.stores.at(root); }
  /// The sandbox's directory in that store.
  std::string StoreDir(size_t root) const { return layout_.SandboxDirIn(Store(root), record_.id); }
  /// Where root `root`'s layers and commit stages are: its StoreDir, or with a hard quota the
  /// layers directory in the quota's own file system.
  std::string StorageDir(size_t root) const { return record_.hard_quota ? quota_layer().layers_dir() : StoreDir(root); }
  /// Each distinct StorageDir once, and with a hard quota each distinct StoreDir too (where its
  /// commits keep what they replaced or removed): every directory holding commit areas.
  std::vector<std::string> StorageDirs() const;
  /// Where Suspend keeps root `root`'s upper layer, as tar.zst (suspension.h): never in a hard
  /// quota's file system, which is freed meanwhile.
  std::string ArchivePath(size_t root) const { return StoreDir(root) + "/archive/" + std::to_string(root) + ".tar.zst"; }
  std::string UpperDir(size_t root) const { return StorageDir(root) + "/upper/" + std::to_string(root); }
  /// The scratch home's layers (create --scratch-home): in the first root's store, never on a
  /// quota's file system (a suspend keeps them as they are, and they are no change).
  std::string ScratchHomeUpper() const { return StoreDir(0) + "/scratch-home/upper"; }
  std::string ScratchHomeWork() const { return StoreDir(0) + "/scratch-home/work"; }
  /// Where its overlay of the owner's home is mounted, beside the roots' merged views.
  std::string ScratchHomeMerged() const { return layout_.RunSandboxDir(record_.id) + "/home"; }
  std::string WorkDir(size_t root) const { return StorageDir(root) + "/work/" + std::to_string(root); }
  /// Commit `commit`'s area for root `root` (one per storage directory, shared by its roots).
  std::string CommitDir(int64_t commit, size_t root) const {
    return StorageDir(root) + "/commits/" + std::to_string(commit);
  }
  std::string CommitUpperDir(int64_t commit, size_t root) const {
    return CommitDir(commit, root) + "/upper/" + std::to_string(root);
  }
  /// The commit area holding commit `commit`'s backups of root `root` (see CommitRemovedDir):
  /// never in a hard quota's file system, whose room is the owner's.
  std::string CommitBackupsDir(int64_t commit, size_t root) const {
    return record_.hard_quota ? StoreDir(root) + "/commits/" + std::to_string(commit) : CommitDir(commit, root);
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
  /// Whether root `root`'s layers are on another file system than the root itself (no storage
  /// area could be used there): its commits then go through a landing area.
  bool LandsAcrossFileSystems(size_t root) const;

  /// Gate: jobs may run together; an exclusive operation runs alone. Both throw Error(kBusy),
  /// or Error(kNotFound) once the sandbox is destroyed.
  /// Throws Error(kInvalidState) unless the sandbox is active (not suspended), naming `verb`
  /// ("read the changes of"...), and as BeginJob does when destroyed or broken.
  void CheckActive(const std::string& verb) const;
  /// Counts a job in; returns when it started (FileClockFineNowNs): its command must not run
  /// before the file clock is past it (JobLaunch::start_mark).
  int64_t BeginJob();
  /// Counts it out (`started`: what BeginJob returned); returns the earliest start of it and of
  /// the jobs still running: a live change from then on may have come after one of them read
  /// the file (live_sight.h).
  /// With `settle`, the job's end is then taken in (scan, sights, count) off its caller's
  /// time, and the sandbox is settling until SettleDone(): exclusive operations and readers of
  /// sights (WaitSettled) wait for that, so they never act on a change set whose sights are not
  /// recorded yet.
  int64_t EndJob(int64_t started, bool settle = false);
  /// `jobs` ended jobs' ends are taken in (or given up on).
  void SettleDone(unsigned jobs = 1);
  /// One settling runs at a time per sandbox, taking in the ends of every job that ended
  /// before it began: jobs ending while a scan of a million changes runs would otherwise each
  /// start one of their own, and scans pile up faster than they end. QueueSettle queues the
  /// end of a job (`unseen_from`: what EndJob returned) and is true when the caller is to run
  /// the settling: then it takes passes (NextSettlePass) until there is none, each covering the
  /// ends queued before it (the earliest `unseen_from` of them) and ended with
  /// SettlePassDone(pass). False: the settling under way takes this end in.
  struct SettlePass {
    int64_t unseen_from_ns = 0;
    unsigned jobs = 0;
  };
  bool QueueSettle(int64_t unseen_from_ns);
  std::optional<SettlePass> NextSettlePass();
  /// The pass under way has stored the sights of every change up to `through` (a change set's
  /// stream order: byte order of {root, path}, changeset_scanner.h).
  void SettledThrough(const std::pair<size_t, std::string>& through);
  /// The pass has taken its jobs' ends in (or given up on them).
  void SettlePassDone(const SettlePass& pass);
  /// Every change whose upper entry last changed before this moment (ns, the file clock) has
  /// had its sight recorded, by a settling this daemon saw through: a later settling need not
  /// look at those again. 0 (nothing known) when the sandbox is loaded: a daemon killed in the
  /// middle of a settling left some without.
  int64_t SightedBeforeNs() const;
  /// After a settling that recorded the sights of every change it was handed: changes whose
  /// upper entry last changed before `ns` (the earliest start of the jobs running when it began)
  /// were final when it scanned them.
  void SightsRecordedBefore(int64_t ns);
  /// Returns once no job's end is being taken in; Error(kBusy) naming `verb` if that takes
  /// more than 10 minutes.
  void WaitSettled(const std::string& verb) const;
  /// Returns once the sights of every change up to `key` (stream order) are stored: no job's
  /// end is being taken in, or only the pass under way is, and it has passed `key`. A listing
  /// reads its conflicts a page at a time behind the settling of the job that just ended,
  /// rather than after all of it. Error(kBusy) as WaitSettled.
  void WaitSettledThrough(const std::pair<size_t, std::string>& key, const std::string& verb) const;
  /// Waits as WaitSettled, then as exclusive operations go. Once it holds the gate, what
  /// follows the layers between jobs (SetBeforeExclusive) lets go of them.
  void BeginExclusive(const std::string& verb);
  /// Called by BeginExclusive (without the sandbox held) before the operation changes the
  /// layers: the change feed kept between jobs (change_feed.h) lets go of what it watches.
  void SetBeforeExclusive(std::function<void()> hook);
  /// `failed`: left by an exception (the progress's last report says so).
  void EndExclusive(bool failed = false);
  unsigned running_jobs() const;
  /// Running jobs and ended ones whose end is still being taken in: work that keeps the
  /// daemon from going idle.
  unsigned jobs_in_progress() const;
  /// Called by destroy while it holds the exclusive gate: from then on every job and operation
  /// is refused, while the overlay is taken down after the caller has had its answer.
  void MarkDestroyed();
  bool destroyed() const;
  /// Called when a commit could neither finish nor be taken back: its journal entry stays for
  /// the next start-up, and until then the sandbox runs nothing and is not changed (a discard
  /// or destroy would throw away the live entries the commit set aside).
  void MarkBroken(const std::string& why);
  bool broken() const;

 private:
  /// Mounts the overlay of the owner's home whose layers are the scratch home's, unless it is.
  void SetUpScratchHome(const UserCredentials& owner);
  /// WaitSettled with mutex_ held by `lock` (released while waiting); WaitSettledThrough
  /// `through` when given.
  void WaitSettledLocked(std::unique_lock<std::mutex>& lock, const std::string& verb,
                         const std::pair<size_t, std::string>* through = nullptr) const;
  /// With mutex_ held. `verb` names what is refused in a suspended sandbox's message; "resume"
  /// and "destroy" are what a suspended sandbox allows (and "resume" only that).
  void CheckUsable(const std::string& verb) const;
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
  mutable std::mutex mutex_;
  /// Signalled when settling_ drops, and when the pass under way moves on.
  mutable std::condition_variable settled_;
  unsigned running_jobs_ = 0;
  unsigned settling_ = 0;  ///< ended jobs whose end is being taken in
  int64_t sighted_before_ns_ = 0;  ///< SightedBeforeNs
  bool settle_running_ = false;    ///< a thread takes passes (QueueSettle)
  SettlePass queued_settle_;       ///< job ends queued for the next pass
  unsigned passing_jobs_ = 0;      ///< job ends the pass under way takes in
  std::optional<std::pair<size_t, std::string>> settled_through_;  ///< SettledThrough, of the pass under way
  std::multiset<int64_t> job_starts_;  ///< of the running jobs
  int64_t last_used_usec_ = 0;
  bool exclusive_ = false;
  std::function<void()> before_exclusive_;
  /// The live roots the exclusive operation under way has opened (OpenLiveRoot), by root.
  mutable std::vector<UniqueFd> operation_roots_;
  bool destroyed_ = false;
  std::string broken_;  ///< why, when it is
  LinkedUp linked_up_;
  ProgressSink progress_sink_;
  /// Of the exclusive operation under way, when it is one that reports progress.
  std::unique_ptr<OperationProgress> progress_;
  /// One scan-and-link-up at a time (Scan, Unmount): a scan that found a name missing from the
  /// upper while another scan linked it up would skip the rescan and list the change set
  /// without that name (seen: `changes` right after a job, racing the job's after-job scan).
  mutable std::mutex link_up_mutex_;
  /// Held through SetUp: jobs starting together in an unmounted sandbox mount it once.
  std::mutex set_up_mutex_;
  mutable ContentVerdicts verdicts_;  ///< what scans learnt of same-size files' content
};

/// RAII for Sandbox::BeginExclusive/EndExclusive.
class ExclusiveOperation {
 public:
  ExclusiveOperation(Sandbox& sandbox, const std::string& verb) : sandbox_(sandbox) { sandbox_.BeginExclusive(verb); }
  ~ExclusiveOperation() { sandbox_.EndExclusive(std::uncaught_exceptions() > unwinding_); }
  ExclusiveOperation(const ExclusiveOperation&) = delete;
  ExclusiveOperation& operator=(const ExclusiveOperation&) = delete;

 private:
  Sandbox& sandbox_;
  const int unwinding_ = std::uncaught_exceptions();  ///< exceptions in flight before it
};

}  // namespace sandboxd
