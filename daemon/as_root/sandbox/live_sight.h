#pragma once
/// What a sandbox saw of the live tree (DESIGN, "Data safety": a conflict is a change of the
/// live tree that the sandbox did not see). For each path the sandbox changes, the live entry
/// as the job that first changed it found it, its *sight*: "-" (nothing there), "dir" (a
/// directory: only that it is one counts, since its times move with its entries), or its inode
/// and ctime (every write, chmod, rename into place or replacement moves the ctime forward, and
/// nothing sets it back). A live entry whose ctime is after the start of the job (or of any job
/// running with it) may have changed after the job read it: its sight is "?", unseen.
///
/// Sights are recorded when a job ends, kept in the database (so they survive restarts, idle
/// exit, suspend and resume), forgotten on discard, and for what a commit or an undo took set
/// to the live entry as it left it. A commit compares each change's live entry with its sight.

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "base/beneath.h"
#include "unique_fd.h"
#include "model/commit_step.h"
#include "sandbox/root_changes.h"
#include "sandbox/sandbox_reader.h"
#include "store/ordered_lookup.h"
#include "store/store.h"

namespace sandboxd {

inline constexpr const char* kUnseen = "?";

/// lstat of the live entry at `path` (relative to the root; "." the root) as `owner` sees it:
/// looked up (each directory on the way, through `lives`, whose opens are made here too) with
/// the owner's file-system identity, on this thread only. Nothing where there is no entry or the
/// owner cannot look it up: a sight, and so a conflict, never tells what root alone could see
/// (DESIGN, "Security model": the live side of every comparison is read with the owner's
/// credentials). Use one `lives` for live lookups only.
std::optional<struct stat> StatLive(const UserCredentials& owner, ParentDirs& lives, const std::string& path);
std::optional<struct stat> StatLive(const UserCredentials& owner, int live_fd, const std::string& path);
/// StatLive of `count` paths (`path_of(i)`, in path order) with the identity taken once: taking
/// it costs several times a stat, so passes over many paths look a batch up at a time.
std::vector<std::optional<struct stat>> StatLiveEach(const UserCredentials& owner, ParentDirs& lives, size_t count,
                                                     const std::function<const std::string&(size_t)>& path_of);

/// The live entry at `path` beneath `live_fd`, as `owner` sees it (StatLive), as a sight; "?"
/// when its ctime is at or after `unseen_from_ns` (nanoseconds since the epoch, as file times are).
std::string LiveSight(const UserCredentials& owner, int live_fd, const std::string& path,
                      int64_t unseen_from_ns = std::numeric_limits<int64_t>::max());

/// The same of a live entry already stat'ed (nothing: there is none).
std::string SightOf(const std::optional<struct stat>& live, int64_t unseen_from_ns = std::numeric_limits<int64_t>::max());

/// Sights per {root, path}.
using Sights = std::map<std::pair<size_t, std::string>, std::string>;

class SightStore {
 public:
  explicit SightStore(Store& store);

  Sights Load(const std::string& sandbox_id);
  /// Up to `limit` sights at or after {root, path} `from`, in that key
  /// order (ordered_lookup.h).
  OrderedLookup<std::string>::Page Page(const std::string& sandbox_id, const RecordKey& from, size_t limit);
  /// The sights of the sandbox one by one as a streaming scan asks for them.
  OrderedLookup<std::string> Lookup(const std::string& sandbox_id);
  /// Records each sight whose path has none yet: the first job to change a path is the one that
  /// read it from the live tree.
  void RecordFirst(const std::string& sandbox_id, const Sights& sights);
  /// Records each sight, replacing what was there.
  void Replace(const std::string& sandbox_id, const Sights& sights);
  void Forget(const std::string& sandbox_id, const std::vector<std::pair<size_t, std::string>>& paths);
  void Clear(const std::string& sandbox_id);

  /// What a live git index staged when the sandbox saw it (changes/git_index_sights.h).
  struct StagedSight {
    size_t root = 0;
    std::string path;
    std::string sight;   ///< the sight it was read at
    std::string staged;  ///< its staged digest then
  };
  void RecordStaged(const std::string& sandbox_id, const std::vector<StagedSight>& staged);
  /// The sight kept for that path, if any.
  std::optional<std::string> SightAt(const std::string& sandbox_id, size_t root, const std::string& path);
  /// The staged digest read at `sight` of that path, if one was.
  std::optional<std::string> StagedAt(const std::string& sandbox_id, size_t root, const std::string& path, const std::string& sight);

 private:
  Store& store_;
};

/// At the end of a job: a sight for every change of `scan` that has none, with live changes
/// from `unseen_from_ns` on unseen; for an entry an earlier job copied up (without changing it
/// then), from `agreed_ns` on (when the sandbox last agreed with the live tree).
void RecordSights(SightStore& sights, const SandboxReader& sandbox, const std::vector<RootChanges>& scan, int64_t unseen_from_ns,
                  int64_t agreed_ns);

/// The same for a change set read as a stream (root by root, in path order): Add each change in
/// turn, then Finish. The sights known are read along and the new ones written a few thousand
/// at a time: what it holds never grows with the change set.
class SightRecorder {
 public:
  /// A change whose upper entry last changed before `sighted_before_ns` (Sandbox::SightedBeforeNs)
  /// is passed over. `recorded_through`, when given, hears after each write the key of the last
  /// change handed in: every change up to it (in the stream's order) has its sight stored.
  SightRecorder(SightStore& sights, const SandboxReader& sandbox, int64_t unseen_from_ns, int64_t agreed_ns, int64_t sighted_before_ns = 0,
                std::function<void(const RecordKey&)> recorded_through = {});
  /// `upper_ctime_ns`: when the upper's entry last changed (ScanChangesTimed; 0: unknown, or no
  /// entry there).
  void Add(size_t root, const Change& change, int64_t upper_ctime_ns = 0);
  void Finish();
  /// `recorded` hears each batch of sights as it is stored (the first ones of their paths).
  void OnRecorded(std::function<void(const Sights&)> recorded) { recorded_ = std::move(recorded); }

 private:
  static constexpr size_t kBatch = 4096;
  void Take(size_t root, const Change& change, int64_t upper_ctime_ns);
  /// Gives each path of unsighted_ its sight: their live entries looked up at once, as the owner.
  void LookLive();
  void Write();

  SightStore& sights_;
  const SandboxReader& sandbox_;
  UserCredentials owner_;  ///< whose eyes the live tree is read with (Sandbox::LiveIdentity)
  OrderedLookup<std::string> known_;
  int64_t unseen_from_ns_, agreed_ns_, sighted_before_ns_;
  std::function<void(const RecordKey&)> recorded_through_;
  std::function<void(const Sights&)> recorded_;
  size_t root_ = 0;
  UniqueFd live_, upper_;
  std::optional<ParentDirs> live_dirs_, upper_dirs_;
  Sights first_;  ///< not written yet
  /// Paths of root_ taken but not yet looked up live, each with the ctime from which a live
  /// change counts as unseen.
  std::vector<std::pair<std::string, int64_t>> unsighted_;
  std::optional<RecordKey> offered_;  ///< the last change handed in
  size_t offered_since_written_ = 0;
};

/// Names a scan linked up (hard_links.h) are copies the sandbox made of live entries: each is in
/// sight as the live entry was when the copy was made (a live change since then is unseen).
void RecordLinkedUpSights(SightStore& sights, const SandboxReader& sandbox, size_t root, const std::vector<std::string>& paths);

/// After a commit or undo that took `paths`: each one still a change of the sandbox is in sight
/// as the live tree is now (the sandbox put it there, or put it back), the others are forgotten.
void ResightAfter(SightStore& sights, const SandboxReader& sandbox, const std::vector<std::pair<size_t, std::string>>& paths);

/// Just before commit work that removes, replaces or moves a name of each live inode in
/// `worked` (per root; InodesNamedBy): the sights of paths whose live entry is one of those
/// inodes and is still as it was seen (no live change unseen).
Sights CurrentSightsOf(SightStore& sights, const SandboxReader& sandbox, const InodesByRoot& worked);

/// After that work: each of `current` (CurrentSightsOf, from before it) still in sight, whose
/// live entry is still the same inode, is in sight as it is now. Its ctime moved with the
/// sandbox's own work (the other names of a hard link see their link count change), not with
/// the owner's; a live change the sandbox had not seen before the work stays unseen. An owner's
/// edit of such a name while the work runs is taken for seen (as ResightAfter takes it for the
/// paths the commit took): a window of the commit's length, where refusing every hard link's
/// other name would be a conflict the owner never made.
void ResightOtherNames(SightStore& sights, const SandboxReader& sandbox, const Sights& current);

}  // namespace sandboxd
