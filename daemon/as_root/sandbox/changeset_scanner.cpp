#include "sandbox/changeset_scanner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "base/beneath.h"
#include "base/directory_listing.h"
#include "base/errors.h"
#include "unique_fd.h"
#include "runtime/file_clock.h"
#include "helper_clients/fs_identity.h"

namespace sandboxd {
namespace {

constexpr mode_t kPermissionBits = 07777;
constexpr size_t kCompareChunk = 64 * 1024;

bool IsWhiteout(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0); }

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

/// Names and d_types in a directory, without "." and "..".
std::vector<std::pair<std::string, unsigned char>> ListTypedDirectory(int dirfd, const std::string& where) {
  DirectoryListing listing = DirectoryListing::Of(dirfd);
  if (!listing) ThrowErrno("cannot read directory " + where);
  std::vector<std::pair<std::string, unsigned char>> entries;
  while (const dirent* entry = listing.Next()) entries.emplace_back(entry->d_name, entry->d_type);
  return entries;
}

/// Names in a directory, sorted, without "." and "..".
std::vector<std::string> ListDirectory(int dirfd, const std::string& where) {
  std::vector<std::string> names;
  for (auto& entry : ListTypedDirectory(dirfd, where)) names.push_back(std::move(entry.first));
  std::sort(names.begin(), names.end());
  return names;
}

/// Reads the live side as the owner: `read` runs with the owner's file-system identity on this
/// thread (fs_identity.h), and root's again after. Why: root reads through any mode, and what
/// it finds would reach the owner as names, modes, sizes and kinds (a kind that says whether
/// a job's file equals one they cannot read is an oracle of its content). Lookups are batched
/// per directory, so a scan takes the identity about once per directory, not per entry.
class OwnerEyes {
 public:
  explicit OwnerEyes(const UserCredentials& owner) : owner_(owner) {}
  template <typename Read>
  void operator()(Read&& read) const {
    ScopedFileSystemIdentity as_owner(owner_);
    read();
  }
  uid_t uid() const { return owner_.uid; }

 private:
  const UserCredentials& owner_;
};

/// Where the owner may not look: a live entry behind it counts as absent, a live directory as
/// unlistable (it hides nothing and shows nothing beneath it).
bool OwnerMayNot(int error) { return error == EACCES || error == EPERM; }

/// lstat of `name` in live directory `lower` (-1: none), with the owner's identity held: nothing
/// where there is no entry or the owner cannot look it up.
std::optional<struct stat> StatLive(int lower, const std::string& name, const std::string& path) {
  if (lower < 0) return std::nullopt;
  struct stat st;
  if (fstatat(lower, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return st;
  if (errno == ENOENT || errno == ENOTDIR || OwnerMayNot(errno)) return std::nullopt;
  ThrowErrno("cannot stat live " + path);
}

/// Opens live directory `name` of `lower` for reading, with the owner's identity held: invalid
/// where there is none or the owner cannot list it.
UniqueFd OpenLiveDirectory(int lower, const std::string& name, const std::string& path) {
  UniqueFd dir(openat(lower, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir && errno != ENOENT && errno != ENOTDIR && !OwnerMayNot(errno)) ThrowErrno("cannot open live " + path);
  return dir;
}

/// Sorted names of live directory `lower` that `upper_names` (sorted) lacks, each with its lstat,
/// with the owner's identity held: the live entries an opaque directory hides. None when the
/// owner cannot list it; a name the owner cannot stat is left out.
std::vector<std::pair<std::string, struct stat>> HiddenLive(int lower, const std::vector<std::string>& upper_names,
                                                            const std::string& dir) {
  std::vector<std::pair<std::string, struct stat>> hidden;
  DirectoryListing listing = DirectoryListing::Of(lower);
  if (!listing) {
    if (OwnerMayNot(errno)) return hidden;
    ThrowErrno("cannot read live directory " + (dir.empty() ? std::string(".") : dir));
  }
  std::vector<std::string> names;
  while (const dirent* entry = listing.Next()) names.emplace_back(entry->d_name);
  std::sort(names.begin(), names.end());
  for (auto& name : names) {
    if (std::binary_search(upper_names.begin(), upper_names.end(), name)) continue;
    struct stat st;
    if (fstatat(lower, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) hidden.emplace_back(std::move(name), st);
  }
  return hidden;
}


/// True when the two open regular files differ in content; reads both in chunks and stops at
/// the first difference.
bool ContentDiffers(const UniqueFd& a, const UniqueFd& b, const std::string& where) {
  std::vector<char> buf_a(kCompareChunk), buf_b(kCompareChunk);
  for (;;) {
    ssize_t got_a = read(a.get(), buf_a.data(), buf_a.size());
    if (got_a < 0) {
      if (errno == EINTR) continue;
      ThrowErrno("cannot read " + where);
    }
    size_t filled = 0;
    while (filled < static_cast<size_t>(got_a)) {
      ssize_t got_b = read(b.get(), buf_b.data() + filled, static_cast<size_t>(got_a) - filled);
      if (got_b < 0 && errno == EINTR) continue;
      if (got_b < 0) ThrowErrno("cannot read " + where);
      if (got_b == 0) return true;  // shorter than its size said: it changed under us
      filled += static_cast<size_t>(got_b);
    }
    if (got_a == 0) {
      char extra;
      return read(b.get(), &extra, 1) > 0;
    }
    if (memcmp(buf_a.data(), buf_b.data(), static_cast<size_t>(got_a)) != 0) return true;
  }
}

std::string ReadLink(int dirfd, const std::string& name, const std::string& where) {
  std::vector<char> buf(256);
  for (;;) {
    ssize_t size = readlinkat(dirfd, name.c_str(), buf.data(), buf.size());
    if (size < 0) ThrowErrno("cannot read symlink " + where);
    if (static_cast<size_t>(size) < buf.size()) return std::string(buf.data(), static_cast<size_t>(size));
    buf.resize(buf.size() * 2);
  }
}

uint64_t Size(const struct stat& st) { return st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0; }

class Scanner {
 public:
  Scanner(const UserCredentials& owner, const TimedChangeVisitor& visit, ContentVerdicts* verdicts,
          std::set<std::string>* multi_linked, uint64_t compare_limit = UINT64_MAX)
      : as_owner_(owner), visit_(visit), verdicts_(verdicts), multi_linked_(multi_linked), compare_limit_(compare_limit) {}

  /// The change of entry `name` of directory `dir` alone (a directory's own, never its
  /// entries'), compared with the live directory `lower` (-1: none there).
  void ScanOne(int upper, int lower, const std::string& dir, const std::string& name) {
    std::optional<struct stat> live;
    as_owner_([&] { live = StatLive(lower, name, Join(dir, name)); });
    ScanEntry(upper, lower, dir, name, false, live);
  }

  /// Runs `read` with the owner's identity (the live side).
  template <typename Read>
  void AsOwner(Read&& read) const {
    as_owner_(std::forward<Read>(read));
  }

  /// Compares upper directory `upper` with lower directory `lower` (invalid: no lower here),
  /// handing out the changes at and below `dir` in the byte order of their paths: a
  /// subdirectory's changes come at the place of "name/", after the siblings whose names
  /// continue "name" with a byte below '/' ("name-1", "name.c"), which a plain walk would
  /// visit later. Such subdirectories wait in `pending` meanwhile (few: only names sharing a
  /// prefix), as names: they are opened when their turn comes.
  void ScanDirectory(int upper, int lower, const std::string& dir, bool hides_lower) {
    std::vector<std::string> upper_names = ListDirectory(upper, dir.empty() ? "." : dir);
    // The live side of the whole directory at once, as the owner sees it: every lower entry
    // without an upper counterpart is gone from the sandbox's view, and each upper entry's live
    // counterpart (if the owner can see one).
    std::vector<std::pair<std::string, struct stat>> gone;
    std::vector<std::optional<struct stat>> live(upper_names.size());
    if (lower >= 0) as_owner_([&] {
      if (hides_lower) gone = HiddenLive(lower, upper_names, dir);
      for (size_t i = 0; i < upper_names.size(); ++i) live[i] = StatLive(lower, upper_names[i], Join(dir, upper_names[i]));
    });
    std::map<std::string, Subdirectory> pending;  // "name/" → what to walk there
    auto walk_pending_before = [&](const std::string* key) {
      while (!pending.empty() && (!key || pending.begin()->first < *key)) {
        Subdirectory sub = std::move(pending.begin()->second);
        pending.erase(pending.begin());
        WalkSubdirectory(upper, lower, dir, sub);
      }
    };
    auto next_upper = upper_names.begin();
    auto next_gone = gone.begin();
    while (next_upper != upper_names.end() || next_gone != gone.end()) {
      bool take_gone = next_upper == upper_names.end() || (next_gone != gone.end() && next_gone->first < *next_upper);
      const std::string& name = take_gone ? next_gone->first : *next_upper;
      walk_pending_before(&name);
      if (take_gone) {
        Deleted(Join(dir, name), next_gone->second, 0);
        ++next_gone;
      } else {
        size_t at = static_cast<size_t>(next_upper - upper_names.begin());
        if (auto sub = ScanEntry(upper, lower, dir, name, hides_lower, live[at])) pending.emplace(name + "/", std::move(*sub));
        ++next_upper;
      }
    }
    walk_pending_before(nullptr);
  }

  void Emit(Change&& change, const struct stat& upper, const struct stat* lower) {
    visit_(std::move(change), UpperEntry{TimespecNs(upper.st_ctim), upper.st_ino, upper.st_nlink, lower ? Size(*lower) : 0, Size(upper)});
  }
  /// A deletion: the live entry only.
  void Emit(Change&& change, int64_t upper_ctime_ns, const struct stat& lower) {
    visit_(std::move(change), UpperEntry{upper_ctime_ns, 0, 0, Size(lower), 0});
  }

 private:
  /// A directory of the upper whose entries are still to be compared.
  struct Subdirectory {
    std::string name;
    bool has_lower_directory = false;  ///< the live tree has a directory there too
    bool hides_lower = false;          ///< it, or a directory above it, is opaque
  };

  OwnerEyes as_owner_;
  const TimedChangeVisitor& visit_;
  ContentVerdicts* verdicts_;
  std::set<std::string>* multi_linked_;
  uint64_t compare_limit_;  ///< same-size files larger than this are called different unread

  void WalkSubdirectory(int upper, int lower, const std::string& dir, const Subdirectory& sub) {
    std::string path = Join(dir, sub.name);
    UniqueFd upper_child(openat(upper, sub.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!upper_child) {
      if (errno == ENOENT || errno == ENOTDIR) return;  // gone (or replaced) since it was listed
      ThrowErrno("cannot open " + path + " in the sandbox");
    }
    // A live directory the owner cannot list hides nothing and shows nothing beneath it.
    UniqueFd lower_child;
    if (sub.has_lower_directory) as_owner_([&] { lower_child = OpenLiveDirectory(lower, sub.name, path); });
    ScanDirectory(upper_child.get(), lower_child.get(), path, sub.hides_lower || IsOpaque(upper_child.get()));
  }

  bool Differs(int lower, int upper, const std::string& name, const struct stat& lst, const struct stat& ust, const std::string& path) {
    if (lst.st_size != ust.st_size) return true;
    if (verdicts_)
      if (auto known = verdicts_->Find(lst, ust)) return *known;
    if (static_cast<uint64_t>(ust.st_size) > compare_limit_) return true;
    // Read before the bytes: a write from now on has a ctime at or after it (file_clock.h).
    int64_t compared_at = verdicts_ ? FileClockNowNs() : 0;
    // The live side is opened as the owner, and so is the upper's unless it is the owner's own
    // (a job's file, which its owner may always read: a chmod is theirs), for the upper may hold
    // a copy of a root-only file that a job renamed. Content the owner cannot read is compared
    // by metadata only, and the same size then says nothing, so it is modified. Never
    // remembered either: a verdict holds only what the owner could read, and anything that
    // changes a file's permissions moves its ctime.
    constexpr int kRead = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    bool upper_as_owner = ust.st_uid != as_owner_.uid();
    UniqueFd a, b;
    int error = 0;
    as_owner_([&] {
      a.reset(openat(lower, name.c_str(), kRead));
      if (a && upper_as_owner) b.reset(openat(upper, name.c_str(), kRead));
      error = errno;
    });
    if (a && !upper_as_owner) {
      b.reset(openat(upper, name.c_str(), kRead));
      error = errno;
    }
    if (!a || !b) {
      if (OwnerMayNot(error)) return true;
      errno = error;
      ThrowErrno("cannot compare " + path);
    }
    bool differs = ContentDiffers(a, b, path);
    // Remembered only for files whose last change came in an earlier tick of the file clock:
    // a second write in the tick of the last one would keep the ctime (and, same size, the
    // whole identity) while changing the bytes, as git's "racily clean" entries do. Such a
    // file is compared again at the next scan.
    if (verdicts_ && TimespecNs(lst.st_ctim) < compared_at && TimespecNs(ust.st_ctim) < compared_at) verdicts_->Remember(lst, ust, differs);
    return differs;
  }

  void Deleted(const std::string& path, const struct stat& lower, int64_t upper_ctime_ns) {
    Change change;
    change.path = path;
    change.kind = ChangeKind::kDeleted;
    change.old_type = EntryTypeFromMode(lower.st_mode);
    change.old_mode = lower.st_mode & kPermissionBits;
    Emit(std::move(change), upper_ctime_ns, lower);
  }

  /// Hands out the change of entry `name` (if it is one); a directory's entries are compared
  /// by the caller, from the returned Subdirectory, when their turn comes.
  /// `live`: the live entry of that name as the owner sees it (StatLive).
  std::optional<Subdirectory> ScanEntry(int upper, int lower, const std::string& dir, const std::string& name, bool parent_hides_lower,
                                        const std::optional<struct stat>& live) {
    std::string path = Join(dir, name);
    struct stat ust;
    if (fstatat(upper, name.c_str(), &ust, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return std::nullopt;
      ThrowErrno("cannot stat " + path + " in the sandbox");
    }
    bool has_lower = live.has_value();
    struct stat lst {};
    if (has_lower) lst = *live;

    if (IsWhiteout(ust)) {
      if (has_lower) Deleted(path, lst, TimespecNs(ust.st_ctim));
      return std::nullopt;
    }

    if (multi_linked_ && S_ISREG(ust.st_mode) && ust.st_nlink > 1) multi_linked_->insert(path);
    Change change;
    change.path = std::move(path);
    change.new_type = EntryTypeFromMode(ust.st_mode);
    change.new_mode = ust.st_mode & kPermissionBits;
    if (has_lower) {
      change.old_type = EntryTypeFromMode(lst.st_mode);
      change.old_mode = lst.st_mode & kPermissionBits;
    }

    if (S_ISDIR(ust.st_mode)) {
      Subdirectory sub{name, has_lower && S_ISDIR(lst.st_mode), parent_hides_lower};
      if (!has_lower) {
        change.kind = ChangeKind::kAdded;
        Emit(std::move(change), ust, has_lower ? &lst : nullptr);
      } else if (!S_ISDIR(lst.st_mode)) {
        change.kind = ChangeKind::kTypeChanged;
        Emit(std::move(change), ust, has_lower ? &lst : nullptr);
      } else if (change.old_mode != change.new_mode) {
        change.kind = ChangeKind::kModeChanged;
        Emit(std::move(change), ust, has_lower ? &lst : nullptr);
      }
      return sub;
    }

    if (!has_lower) {
      change.kind = ChangeKind::kAdded;
    } else if ((lst.st_mode & S_IFMT) != (ust.st_mode & S_IFMT)) {
      change.kind = ChangeKind::kTypeChanged;
    } else if (S_ISREG(ust.st_mode)) {
      if (Differs(lower, upper, name, lst, ust, change.path)) change.kind = ChangeKind::kModified;
      else if (change.old_mode != change.new_mode) change.kind = ChangeKind::kModeChanged;
      else return std::nullopt;  // copied up only: not a change
    } else if (S_ISLNK(ust.st_mode)) {
      std::string live_target;
      bool readable = true;
      // A target the owner can no longer read (the lookup lost since the stat) counts as another.
      as_owner_([&] {
        try {
          live_target = ReadLink(lower, name, change.path);
        } catch (const Error&) {
          readable = false;
        }
      });
      if (readable && live_target == ReadLink(upper, name, change.path)) return std::nullopt;
      change.kind = ChangeKind::kModified;
    } else {
      if (lst.st_rdev != ust.st_rdev) change.kind = ChangeKind::kModified;
      else if (change.old_mode != change.new_mode) change.kind = ChangeKind::kModeChanged;
      else return std::nullopt;
    }
    Emit(std::move(change), ust, has_lower ? &lst : nullptr);
    return std::nullopt;
  }
};

}  // namespace

namespace {

/// The live root, opened for reading as the owner: an owner who cannot read their own root is
/// told so, rather than shown a change set made with root's eyes or an empty one.
UniqueFd OpenLiveRootAsOwner(int lower_dirfd, const OwnerEyes& as_owner) {
  UniqueFd lower;
  int error = 0;
  as_owner([&] {
    lower.reset(openat(lower_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    error = errno;
  });
  if (lower) return lower;
  if (OwnerMayNot(error)) throw Error(Code::kAccessDenied, "the owner cannot read the live root");
  errno = error;
  ThrowErrno("cannot open the live root");
}

}  // namespace

void ScanChanges(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, const ChangeVisitor& visit,
                 ContentVerdicts* verdicts, std::set<std::string>* multi_linked) {
  ScanChangesTimed(lower_dirfd, upper_dirfd, owner, [&](Change&& change, const UpperEntry&) { visit(std::move(change)); },
                   verdicts, multi_linked);
}

namespace {

/// The roots' own change (".": only a mode tells, as for any directory), their stats in `ust`
/// and `lst`.
std::optional<Change> RootEntryChange(int upper, int lower, struct stat& ust, struct stat& lst) {
  if (fstat(upper, &ust) != 0 || fstat(lower, &lst) != 0) ThrowErrno("cannot stat the roots");
  if ((ust.st_mode & kPermissionBits) == (lst.st_mode & kPermissionBits)) return std::nullopt;
  return Change{".", ChangeKind::kModeChanged, EntryType::kDirectory, EntryType::kDirectory,
                static_cast<mode_t>(lst.st_mode & kPermissionBits), static_cast<mode_t>(ust.st_mode & kPermissionBits)};
}

}  // namespace

void ScanChangesTimed(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, const TimedChangeVisitor& visit,
                      ContentVerdicts* verdicts, std::set<std::string>* multi_linked) {
  Scanner scanner(owner, visit, verdicts, multi_linked);
  UniqueFd upper(openat(upper_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!upper) ThrowErrno("cannot open the sandbox's upper layer");
  UniqueFd lower = OpenLiveRootAsOwner(lower_dirfd, OwnerEyes(owner));
  struct stat ust, lst;
  if (auto root = RootEntryChange(upper.get(), lower.get(), ust, lst)) scanner.Emit(std::move(*root), ust, &lst);
  scanner.ScanDirectory(upper.get(), lower.get(), "", IsOpaque(upper.get()));
}

namespace {

/// The roots' own change ("." mode-changed), as ScanChanges lists it first; nothing when the
/// two roots' modes agree.
std::optional<Change> ScanRootEntry(int lower_dirfd, int upper_dirfd, const UserCredentials& owner) {
  UniqueFd upper(openat(upper_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!upper) ThrowErrno("cannot open the sandbox's upper layer");
  UniqueFd lower = OpenLiveRootAsOwner(lower_dirfd, OwnerEyes(owner));
  struct stat ust, lst;
  return RootEntryChange(upper.get(), lower.get(), ust, lst);
}

/// ScanDeletions beneath one directory: the upper's side first (as the daemon: whiteouts and
/// subdirectories), then the live side of the whole directory at once, as the owner sees it.
void WalkDeletions(const OwnerEyes& as_owner, int upper, int lower, const std::string& dir, bool hides_lower,
                   std::vector<Change>& found) {
  if (lower < 0) return;  // nothing live here (or nothing the owner can list): nothing below can be deleted
  auto entries = ListTypedDirectory(upper, dir.empty() ? "." : dir);
  auto deleted = [&](const std::string& name, const struct stat& lst) {
    found.push_back({Join(dir, name), ChangeKind::kDeleted, EntryTypeFromMode(lst.st_mode), EntryType::kNone,
                     static_cast<mode_t>(lst.st_mode & kPermissionBits), 0});
  };
  std::vector<std::string> whiteouts, subdirectories;
  for (const auto& [name, type] : entries) {
    if (type != DT_CHR && type != DT_DIR && type != DT_UNKNOWN) continue;  // files, symlinks...: not deletions
    if (type != DT_DIR) {
      struct stat ust;
      if (fstatat(upper, name.c_str(), &ust, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
      if (IsWhiteout(ust)) {
        whiteouts.push_back(name);
        continue;
      }
      if (!S_ISDIR(ust.st_mode)) continue;
    }
    subdirectories.push_back(name);
  }
  std::vector<std::string> upper_names;
  if (hides_lower)
    for (const auto& entry : entries) upper_names.push_back(entry.first);
  std::sort(upper_names.begin(), upper_names.end());
  as_owner([&] {
    if (hides_lower)
      for (const auto& [name, lst] : HiddenLive(lower, upper_names, dir)) deleted(name, lst);
    for (const auto& name : whiteouts)
      if (auto lst = StatLive(lower, name, Join(dir, name))) deleted(name, *lst);
  });
  // Below a directory of the upper, deletions are of the live directory of that name (a live
  // non-directory there is replaced whole: a type change, nothing deleted below). One pair of
  // descriptors at a time: a directory may have many subdirectories.
  for (const auto& name : subdirectories) {
    std::string path = Join(dir, name);
    UniqueFd lower_child;  // none there, no directory, or none the owner can list: nothing below
    as_owner([&] { lower_child.reset(openat(lower, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)); });
    if (!lower_child) continue;
    UniqueFd upper_child(openat(upper, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!upper_child) continue;
    WalkDeletions(as_owner, upper_child.get(), lower_child.get(), path, hides_lower || IsOpaque(upper_child.get()), found);
  }
}

}  // namespace

std::vector<Change> ScanDeletions(int lower_dirfd, int upper_dirfd, const UserCredentials& owner) {
  OwnerEyes as_owner(owner);
  UniqueFd upper(openat(upper_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!upper) ThrowErrno("cannot open the sandbox's upper layer");
  UniqueFd lower = OpenLiveRootAsOwner(lower_dirfd, as_owner);
  std::vector<Change> found;
  WalkDeletions(as_owner, upper.get(), lower.get(), "", IsOpaque(upper.get()), found);
  std::sort(found.begin(), found.end(), [](const Change& a, const Change& b) { return a.path < b.path; });
  return found;
}

std::vector<Change> ScanChanges(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, ContentVerdicts* verdicts,
                                std::set<std::string>* multi_linked) {
  std::vector<Change> changes;
  ScanChanges(lower_dirfd, upper_dirfd, owner, [&](Change&& change) { changes.push_back(std::move(change)); }, verdicts,
              multi_linked);
  return changes;
}

std::optional<Change> ScanOnePath(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, const std::string& path,
                                  uint64_t compare_limit) {
  if (path == ".") return ScanRootEntry(lower_dirfd, upper_dirfd, owner);
  auto [parent, name] = SplitParent(path);
  UniqueFd upper = OpenBeneath(upper_dirfd, parent, O_PATH | O_DIRECTORY);
  if (!upper) return std::nullopt;  // gone from the sandbox (or no directory any more): nothing of it differs
  std::optional<Change> found;
  TimedChangeVisitor keep = [&](Change&& change, const UpperEntry&) { found = std::move(change); };
  Scanner scanner(owner, keep, nullptr, nullptr, compare_limit);
  // Each directory on the way looked up as the owner: beneath one they cannot search there is
  // no live entry for them.
  UniqueFd lower;
  // (`parent` by name: clang 14 cannot capture a structured binding.)
  const std::string& way = parent;
  scanner.AsOwner([&] { lower = OpenBeneath(lower_dirfd, way, O_PATH | O_DIRECTORY); });
  scanner.ScanOne(upper.get(), lower.get(), parent == "." ? "" : parent, name);
  return found;
}

bool IsOpaque(int dirfd) {
  // overlayfs marks it with a trusted xattr (root can read trusted.*); "user.overlay.opaque"
  // covers userxattr mounts.
  char value[4] = {};
  std::string path = "/proc/self/fd/" + std::to_string(dirfd);
  for (const char* name : {"trusted.overlay.opaque", "user.overlay.opaque"}) {
    ssize_t size = getxattr(path.c_str(), name, value, sizeof value);
    if (size == 1 && value[0] == 'y') return true;
  }
  return false;
}

}  // namespace sandboxd
