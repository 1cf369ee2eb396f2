#include "sandbox/live_sight.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <optional>

#include "base/beneath.h"
#include "unique_fd.h"
#include "runtime/file_clock.h"
#include "base/errors.h"
#include "helper_clients/fs_identity.h"
#include "store/sqlite.h"

namespace sandboxd {
namespace {

constexpr const char* kSightSchema = R"sql(
CREATE TABLE IF NOT EXISTS live_sights (
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  root INTEGER NOT NULL,
  path TEXT NOT NULL,
  sight TEXT NOT NULL,
  PRIMARY KEY (sandbox_id, root, path)
);
CREATE TABLE IF NOT EXISTS staged_sights (
  sandbox_id TEXT NOT NULL REFERENCES sandboxes(id) ON DELETE CASCADE,
  root INTEGER NOT NULL,
  path TEXT NOT NULL,
  sight TEXT NOT NULL,
  staged TEXT NOT NULL,
  PRIMARY KEY (sandbox_id, root, path)
);
)sql";

/// When the upper's entry at `path` (not a directory) was made there, by its birth time (its
/// ctime where the file system keeps none; renames and writes keep the birth time).
std::optional<int64_t> MadeNs(int upper_fd, const std::string& path) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(upper_fd, parent_path, O_PATH | O_DIRECTORY);
  struct statx st;
  if (!parent || statx(parent.get(), name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_CTIME | STATX_BTIME, &st) != 0 ||
      S_ISDIR(st.stx_mode))
    return std::nullopt;
  const struct statx_timestamp& made = (st.stx_mask & STATX_BTIME) ? st.stx_btime : st.stx_ctime;
  return int64_t{made.tv_sec} * 1000000000 + made.tv_nsec;
}

/// When the upper's entry at `path` (not a directory) was made there by its birth time alone:
/// for a copied-up file, when the sandbox read the live one. Nothing where the file system
/// keeps no birth time (a ctime would be the last write, not the read).
std::optional<int64_t> BornNs(int upper_fd, const std::string& path) {
  auto [parent_path, name] = SplitParent(path);
  UniqueFd parent = OpenBeneath(upper_fd, parent_path, O_PATH | O_DIRECTORY);
  struct statx st;
  if (!parent || statx(parent.get(), name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_BTIME, &st) != 0 ||
      S_ISDIR(st.stx_mode) || !(st.stx_mask & STATX_BTIME))
    return std::nullopt;
  return int64_t{st.stx_btime.tv_sec} * 1000000000 + st.stx_btime.tv_nsec;
}

}  // namespace

namespace {

/// StatLive's look, with the owner's identity held by the caller; `error` gets an error that
/// is not the owner's lack of an entry to see (0: none).
std::optional<struct stat> StatLiveHeld(ParentDirs& lives, const std::string& path, int& error) {
  struct stat st;
  std::string name;
  int failed = 0;
  if (path == ".") {
    if (fstat(lives.root(), &st) == 0) return st;
    failed = errno;
  } else if (int parent = lives.Open(path, name); parent >= 0) {
    if (fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return st;
    failed = errno;
  }
  if (failed != ENOENT && failed != ENOTDIR && failed != EACCES && failed != EPERM && error == 0) error = failed;
  return std::nullopt;
}

void ThrowLiveError(int error, const std::string& path) {
  errno = error;
  ThrowErrno("cannot stat live " + path);
}

}  // namespace

std::optional<struct stat> StatLive(const UserCredentials& owner, ParentDirs& lives, const std::string& path) {
  std::optional<struct stat> found;
  int error = 0;
  {
    // Every lookup on the way as the owner: a directory they cannot search hides its entries.
    ScopedFileSystemIdentity as_owner(owner);
    found = StatLiveHeld(lives, path, error);
  }
  if (error != 0) ThrowLiveError(error, path);
  return found;
}

std::vector<std::optional<struct stat>> StatLiveEach(const UserCredentials& owner, ParentDirs& lives, size_t count,
                                                     const std::function<const std::string&(size_t)>& path_of) {
  std::vector<std::optional<struct stat>> found(count);
  int error = 0;
  size_t failed_at = 0;
  {
    ScopedFileSystemIdentity as_owner(owner);
    for (size_t i = 0; i < count && error == 0; ++i) {
      found[i] = StatLiveHeld(lives, path_of(i), error);
      failed_at = i;
    }
  }
  if (error != 0) ThrowLiveError(error, path_of(failed_at));
  return found;
}

std::optional<struct stat> StatLive(const UserCredentials& owner, int live_fd, const std::string& path) {
  ParentDirs lives(live_fd);
  return StatLive(owner, lives, path);
}

std::string LiveSight(const UserCredentials& owner, int live_fd, const std::string& path, int64_t unseen_from_ns) {
  return SightOf(StatLive(owner, live_fd, path), unseen_from_ns);
}

std::string SightOf(const std::optional<struct stat>& found, int64_t unseen_from_ns) {
  if (!found) return "-";
  if (S_ISDIR(found->st_mode)) return "dir";
  if (TimespecNs(found->st_ctim) >= unseen_from_ns) return kUnseen;
  return std::to_string(found->st_ino) + ":" + std::to_string(TimespecNs(found->st_ctim));
}

SightStore::SightStore(Store& store) : store_(store) {
  store_.WithDatabase([](Database& db) { db.Exec(kSightSchema); });
}

Sights SightStore::Load(const std::string& sandbox_id) {
  return store_.WithDatabase([&](Database& db) {
    Sights sights;
    Statement select(db, "SELECT root, path, sight FROM live_sights WHERE sandbox_id = ?");
    select.Bind(1, sandbox_id);
    while (select.Step()) sights[{static_cast<size_t>(select.ColumnInt(0)), select.ColumnText(1)}] = select.ColumnText(2);
    return sights;
  });
}

OrderedLookup<std::string>::Page SightStore::Page(const std::string& sandbox_id, const RecordKey& from,
                                                 size_t limit) {
  return store_.WithDatabase([&](Database& db) {
    OrderedLookup<std::string>::Page page;
    Statement select(db, "SELECT root, path, sight FROM live_sights WHERE sandbox_id = ? AND (root, path) >= (?, ?) ORDER BY root, path LIMIT ?");
    select.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(from.first)).Bind(3, from.second);
    select.Bind(4, static_cast<int64_t>(limit));
    while (select.Step()) page.push_back({{static_cast<size_t>(select.ColumnInt(0)), select.ColumnText(1)}, select.ColumnText(2)});
    return page;
  });
}

OrderedLookup<std::string> SightStore::Lookup(const std::string& sandbox_id) {
  return OrderedLookup<std::string>(
      [this, sandbox_id](const RecordKey& from, size_t limit) { return Page(sandbox_id, from, limit); });
}

namespace {

void Write(Store& store, const std::string& sandbox_id, const Sights& sights, const char* verb) {
  if (sights.empty()) return;
  store.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement insert(db, std::string("INSERT OR ") + verb + " INTO live_sights(sandbox_id, root, path, sight) VALUES (?, ?, ?, ?)");
    for (const auto& [key, sight] : sights)
      insert.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(key.first)).Bind(3, key.second).Bind(4, sight).Run();
    tx.Commit();
  });
}

}  // namespace

void SightStore::RecordFirst(const std::string& sandbox_id, const Sights& sights) { Write(store_, sandbox_id, sights, "IGNORE"); }

void SightStore::Replace(const std::string& sandbox_id, const Sights& sights) { Write(store_, sandbox_id, sights, "REPLACE"); }

void SightStore::Forget(const std::string& sandbox_id, const std::vector<std::pair<size_t, std::string>>& paths) {
  if (paths.empty()) return;
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement erase(db, "DELETE FROM live_sights WHERE sandbox_id = ? AND root = ? AND path = ?");
    Statement erase_staged(db, "DELETE FROM staged_sights WHERE sandbox_id = ? AND root = ? AND path = ?");
    for (const auto& [root, path] : paths) {
      erase.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(root)).Bind(3, path).Run();
      erase_staged.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(root)).Bind(3, path).Run();
    }
    tx.Commit();
  });
}

void SightStore::Clear(const std::string& sandbox_id) {
  store_.WithDatabase([&](Database& db) {
    Statement(db, "DELETE FROM live_sights WHERE sandbox_id = ?").Bind(1, sandbox_id).Run();
    Statement(db, "DELETE FROM staged_sights WHERE sandbox_id = ?").Bind(1, sandbox_id).Run();
  });
}

void SightStore::RecordStaged(const std::string& sandbox_id, const std::vector<StagedSight>& staged) {
  if (staged.empty()) return;
  store_.WithDatabase([&](Database& db) {
    Transaction tx(db);
    Statement insert(db, "INSERT OR REPLACE INTO staged_sights(sandbox_id, root, path, sight, staged) VALUES (?, ?, ?, ?, ?)");
    for (const auto& one : staged)
      insert.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(one.root)).Bind(3, one.path).Bind(4, one.sight).Bind(5, one.staged).Run();
    tx.Commit();
  });
}

std::optional<std::string> SightStore::SightAt(const std::string& sandbox_id, size_t root, const std::string& path) {
  return store_.WithDatabase([&](Database& db) -> std::optional<std::string> {
    Statement select(db, "SELECT sight FROM live_sights WHERE sandbox_id = ? AND root = ? AND path = ?");
    select.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(root)).Bind(3, path);
    if (!select.Step()) return std::nullopt;
    return select.ColumnText(0);
  });
}

std::optional<std::string> SightStore::StagedAt(const std::string& sandbox_id, size_t root, const std::string& path, const std::string& sight) {
  return store_.WithDatabase([&](Database& db) -> std::optional<std::string> {
    Statement select(db, "SELECT staged FROM staged_sights WHERE sandbox_id = ? AND root = ? AND path = ? AND sight = ?");
    select.Bind(1, sandbox_id).Bind(2, static_cast<int64_t>(root)).Bind(3, path).Bind(4, sight);
    if (!select.Step()) return std::nullopt;
    return select.ColumnText(0);
  });
}

SightRecorder::SightRecorder(SightStore& sights, const SandboxReader& sandbox, int64_t unseen_from_ns, int64_t agreed_ns,
                             int64_t sighted_before_ns, std::function<void(const RecordKey&)> recorded_through)
    : sights_(sights),
      sandbox_(sandbox),
      owner_(sandbox.LiveIdentity()),
      known_(sights.Lookup(sandbox.id())),
      unseen_from_ns_(unseen_from_ns),
      agreed_ns_(agreed_ns),
      sighted_before_ns_(std::min(sighted_before_ns, unseen_from_ns)),
      recorded_through_(std::move(recorded_through)) {}

void SightRecorder::Add(size_t root, const Change& change, int64_t upper_ctime_ns) {
  Take(root, change, upper_ctime_ns);
  offered_ = {root, change.path};
  // Written every few thousand changes handed in, recorded or not: a listing waiting for the
  // sights of its page (Sandbox::WaitSettledThrough) follows this settling closely.
  if (first_.size() + unsighted_.size() >= kBatch || ++offered_since_written_ >= kBatch) Write();
}

void SightRecorder::Take(size_t root, const Change& change, int64_t upper_ctime_ns) {
  if (change.path == ".") return;
  // An entry the upper has not changed since an earlier settling saw it final has the sight that
  // settling gave it, or needed none then and became a change by a live change alone (which no
  // sight taken now would call seen: see `earlier` below). Passing those over keeps a
  // settling's cost with what its job changed, not with the whole change set.
  if (upper_ctime_ns != 0 && upper_ctime_ns < sighted_before_ns_) return;
  if (known_.Find({root, change.path})) return;
  if (root != root_ || !live_) {
    LookLive();  // the paths of the root before
    root_ = root;
    live_ = sandbox_.OpenLiveRoot(root);
    upper_ = sandbox_.OpenUpper(root);
    live_dirs_.emplace(live_.get());  // changes come in path order: one open per directory
    upper_dirs_.emplace(upper_.get());
  }
  // An entry the upper held before this job began was copied up by an earlier one, which left
  // it as the live one was (no change then, so no sight): since when it has not followed the
  // live tree is unknown, so a live change since the sandbox last agreed with it counts as
  // unseen. The scan's own look at the upper entry tells that where it is handed in (a change
  // with nothing in the upper, a deletion under an opaque directory, has no time: no entry).
  bool earlier = false;
  if (upper_ctime_ns != 0) {
    earlier = change.new_type != EntryType::kDirectory && upper_ctime_ns < unseen_from_ns_;
  } else {
    auto held = StatBeneath(*upper_dirs_, change.path);
    earlier = held && !S_ISDIR(held->st_mode) && TimespecNs(held->st_ctim) < unseen_from_ns_;
  }
  // Copied up by this job: the live entry as it was at the copy-up is what the sandbox read
  // (DESIGN, "Conflicts"), so a live change made while the job ran but before that is seen.
  int64_t unseen_from = unseen_from_ns_;
  if (!earlier && change.new_type != EntryType::kDirectory)
    if (auto born = BornNs(upper_.get(), change.path)) unseen_from = std::max(unseen_from, *born);
  unsighted_.emplace_back(change.path, earlier ? std::min(agreed_ns_, unseen_from_ns_) : unseen_from);
}

void SightRecorder::LookLive() {
  if (unsighted_.empty()) return;
  auto found = StatLiveEach(owner_, *live_dirs_, unsighted_.size(), [&](size_t i) -> const std::string& { return unsighted_[i].first; });
  for (size_t i = 0; i < unsighted_.size(); ++i) first_[{root_, unsighted_[i].first}] = SightOf(found[i], unsighted_[i].second);
  unsighted_.clear();
}

void SightRecorder::Write() {
  LookLive();
  sights_.RecordFirst(sandbox_.id(), first_);
  if (recorded_ && !first_.empty()) recorded_(first_);
  first_.clear();
  offered_since_written_ = 0;
  if (recorded_through_ && offered_) recorded_through_(*offered_);
}

void SightRecorder::Finish() { Write(); }

void RecordSights(SightStore& sights, const SandboxReader& sandbox, const std::vector<RootChanges>& scan, int64_t unseen_from_ns,
                  int64_t agreed_ns) {
  SightRecorder recorder(sights, sandbox, unseen_from_ns, agreed_ns);
  for (const auto& root : scan)
    for (const auto& change : root.changes) recorder.Add(root.root, change);
  recorder.Finish();
}

void RecordLinkedUpSights(SightStore& sights, const SandboxReader& sandbox, size_t root, const std::vector<std::string>& paths) {
  UniqueFd live = sandbox.OpenLiveRoot(root), upper = sandbox.OpenUpper(root);
  UserCredentials owner = sandbox.LiveIdentity();
  Sights first;
  for (const auto& path : paths) {
    auto made = MadeNs(upper.get(), path);
    if (made) first[{root, path}] = LiveSight(owner, live.get(), path, *made);
  }
  sights.RecordFirst(sandbox.id(), first);
}

void ResightAfter(SightStore& sights, const SandboxReader& sandbox, const std::vector<std::pair<size_t, std::string>>& paths) {
  std::map<size_t, std::pair<UniqueFd, UniqueFd>> roots;  // live, upper
  Sights now;
  std::vector<std::pair<size_t, std::string>> gone;
  std::map<size_t, std::vector<const std::string*>> kept;  // per root, the paths still changes
  for (const auto& [root, path] : paths) {
    auto& fds = roots[root];
    if (!fds.first) fds = {sandbox.OpenLiveRoot(root), sandbox.OpenUpper(root)};
    if (StatBeneath(fds.second.get(), path)) {
      kept[root].push_back(&path);
    } else {
      gone.emplace_back(root, path);
    }
  }
  // Their live sides at once per root, as the owner sees them (a commit may take a million).
  UserCredentials owner = sandbox.LiveIdentity();
  for (const auto& [root, kept_paths] : kept) {
    ParentDirs lives(roots[root].first.get());
    // (Captured by name: clang 14 cannot capture a structured binding.)
    const auto& list = kept_paths;
    auto found = StatLiveEach(owner, lives, list.size(), [&list](size_t i) -> const std::string& { return *list[i]; });
    for (size_t i = 0; i < kept_paths.size(); ++i) now[{root, *kept_paths[i]}] = SightOf(found[i]);
  }
  sights.Replace(sandbox.id(), now);
  sights.Forget(sandbox.id(), gone);
}

namespace {

std::optional<ino_t> SightInode(const std::string& sight) {
  size_t colon = sight.find(':');
  if (colon == std::string::npos) return std::nullopt;  // "-", "dir", "?": no inode
  try {
    return static_cast<ino_t>(std::stoull(sight.substr(0, colon)));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

namespace {

/// How each of `recorded` (sights, by root and path) looks in the live tree now: one identity
/// switch and one walk of parent directories per root (in path order, a directory's entries
/// share their parent), not one per entry (a commit of 5,000 files spent a fifth of its time
/// switching identities here).
std::vector<std::string> LookAgain(const SandboxReader& sandbox, const std::vector<std::pair<std::pair<size_t, std::string>, std::string>>& recorded) {
  std::vector<std::string> seen(recorded.size());
  UserCredentials owner = sandbox.LiveIdentity();
  for (size_t begin = 0; begin < recorded.size();) {
    const size_t root = recorded[begin].first.first;
    size_t end = begin;
    while (end < recorded.size() && recorded[end].first.first == root) ++end;
    UniqueFd live = sandbox.OpenLiveRoot(root);
    ParentDirs lives(live.get());
    auto found = StatLiveEach(owner, lives, end - begin, [&](size_t i) -> const std::string& { return recorded[begin + i].first.second; });
    for (size_t i = 0; i < found.size(); ++i) seen[begin + i] = SightOf(found[i]);
    begin = end;
  }
  return seen;
}

}  // namespace

Sights CurrentSightsOf(SightStore& sights, const SandboxReader& sandbox, const InodesByRoot& worked) {
  Sights current;
  if (worked.empty()) return current;
  std::vector<std::pair<std::pair<size_t, std::string>, std::string>> candidates;
  for (const auto& [key, sight] : sights.Load(sandbox.id())) {
    auto inodes = worked.find(key.first);
    auto inode = SightInode(sight);
    if (inodes == worked.end() || !inode || !inodes->second.count(*inode)) continue;
    candidates.emplace_back(key, sight);
  }
  std::vector<std::string> seen = LookAgain(sandbox, candidates);
  for (size_t i = 0; i < candidates.size(); ++i)
    if (seen[i] == candidates[i].second) current[candidates[i].first] = candidates[i].second;
  return current;
}

void ResightOtherNames(SightStore& sights, const SandboxReader& sandbox, const Sights& current) {
  if (current.empty()) return;
  std::vector<std::pair<std::pair<size_t, std::string>, std::string>> candidates;
  for (const auto& [key, sight] : sights.Load(sandbox.id())) {
    auto before = current.find(key);
    if (before == current.end() || before->second != sight) continue;  // gone meanwhile, or seen anew
    candidates.emplace_back(key, sight);
  }
  std::vector<std::string> seen = LookAgain(sandbox, candidates);
  Sights now;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (seen[i] != candidates[i].second && SightInode(seen[i]) == SightInode(candidates[i].second)) now[candidates[i].first] = seen[i];
  sights.Replace(sandbox.id(), now);
}

}  // namespace sandboxd
