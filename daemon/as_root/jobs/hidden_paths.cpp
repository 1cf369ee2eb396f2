#include "jobs/hidden_paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>

#include "base/directory_listing.h"
#include "base/errors.h"
#include "base/fs_util.h"
#include "jobs/host_sockets.h"
#include "helper_clients/fs_identity.h"
#include "sandbox/root_validation.h"

namespace sandboxd {
namespace {

/// True when `inner` is `outer` or lies beneath it (both absolute and normalised).

/// realpath(3) as a string; nullopt when the path (or what a symlink on it points to) does not
/// exist, or loops: then the job cannot reach anything there either. Any other failure throws,
/// so that a path we cannot look up is never silently left visible.
/// With `unreachable_is_missing` (lookups with the owner's identity), EACCES counts as missing
/// too: what the owner cannot reach, the job cannot either.
std::optional<std::string> Canonical(const std::string& path, bool unreachable_is_missing = false) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) != nullptr) return std::string(buffer);
  if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return std::nullopt;
  if (errno == EACCES && unreachable_is_missing) return std::nullopt;
  ThrowErrno("cannot look up hidden path " + path);
}

std::optional<HiddenEntry> LookUp(const std::string& path, bool unreachable_is_missing = false) {
  auto canonical = Canonical(path, unreachable_is_missing);
  if (!canonical) return std::nullopt;
  struct stat st;
  if (lstat(canonical->c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;  // removed since realpath
    if (errno == EACCES && unreachable_is_missing) return std::nullopt;
    ThrowErrno("cannot look up hidden path " + path);
  }
  return HiddenEntry{*canonical, S_ISDIR(st.st_mode)};
}

/// What the job sees at `entry` when it lies strictly inside `root`: the merged view's entry at
/// the same place, or nullopt when the sandbox deleted it or put a symlink on the way (then
/// none of the live content is visible there, and bwrap would otherwise create a mount point
/// in the sandbox's upper layer or fail on a type mismatch).
std::optional<HiddenEntry> InMergedView(const HiddenEntry& entry, const BwrapRoot& root) {
  if (root.merged.empty()) return entry;
  auto merged = Canonical(root.merged);
  if (!merged) return std::nullopt;
  std::string view = *merged + entry.path.substr(root.real_path.size());
  auto found = LookUp(view);
  if (!found || found->path != view) return std::nullopt;
  return HiddenEntry{entry.path, found->directory};
}

std::string ExpandHome(const std::string& entry, const std::string& home) {
  if (entry.rfind("~/", 0) != 0) return entry;
  std::string base = home;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base == "/") base.clear();
  return base + entry.substr(1);
}

/// True when `path` is out of the job's sight under a cover: inside it, and neither in what it
/// binds back nor on the way there (hiding /home/staff must still hide /home/staff/erin when
/// that is the owner's home). (Roots are the caller's to check: bwrap binds them on top.)
bool Covered(const std::vector<BwrapCover>& covers, const std::string& path) {
  for (const auto& cover : covers) {
    if (!PathHolds(cover.path, path)) continue;
    return std::none_of(cover.binds.begin(), cover.binds.end(),
                        [&](const std::string& bind) { return PathHolds(bind, path) || PathHolds(path, bind); });
  }
  return false;
}

class Collector {
 public:
  explicit Collector(const HiddenPathsRequest& request) : request_(request) {}

  /// Paths under these are dropped as they are added (Covered).
  void SetCovers(const std::vector<BwrapCover>* covers) { covers_ = covers; }

  /// Adds `path` (absolute, checked). `given` is how the caller wrote it, for messages.
  /// `owners` paths (explicit, or in the owner's home) are looked up as the owner, when the
  /// request says who that is.
  void Add(const std::string& path, const std::string& given, bool explicitly, bool owners = false) {
    std::optional<HiddenEntry> found;
    if (owners && request_.owner_identity) {
      ScopedFileSystemIdentity identity(*request_.owner_identity);
      found = LookUp(path, /*unreachable_is_missing=*/true);
    } else {
      found = LookUp(path);
    }
    if (!found) return;  // nothing there to read
    for (const auto& root : request_.roots) {
      if (!PathHolds(found->path, root.real_path)) continue;
      // Hiding a root would hide the sandbox itself. Asked for explicitly, that is a mistake
      // to report; from the configuration, the owner chose to sandbox that tree.
      if (!explicitly) return;
      std::string what = found->path == given ? "it" : "it resolves to " + found->path + ", which";
      throw Error(Code::kInvalidPath, "cannot hide " + given + " in sandbox " + request_.sandbox_id + ": " + what +
                                          " holds root " + root.real_path);
    }
    bool in_root = false;
    for (const auto& root : request_.roots) {
      if (!PathHolds(root.real_path, found->path)) continue;
      found = InMergedView(*found, root);
      if (!found) return;
      in_root = true;
      break;  // roots never nest
    }
    // Outside the roots, the job's /tmp and /var/tmp are its own empty ones: the host's
    // entries there are out of its sight already, and hiding one would only plant a mount
    // point in the job's tmpfs.
    if (!in_root)
      for (const auto& dir : request_.private_dirs)
        if (PathHolds(dir, found->path)) return;
    // Under a cover the path is gone already, and no mount point could be made for it there.
    if (!in_root && covers_ && Covered(*covers_, found->path)) return;
    entries_.push_back(*found);
  }

  /// A socket the host bound at `path` (HiddenPathsRequest::sockets), looked up as the owner.
  void AddSocket(const std::string& path) {
    auto found = SocketTheOwnerReaches(path, *request_.owner_identity);
    if (!found) return;
    const std::string& canonical = *found;
    if (std::find(request_.allowed_sockets.begin(), request_.allowed_sockets.end(), canonical) != request_.allowed_sockets.end()) return;
    if (OutOfSight(canonical)) return;
    entries_.push_back({canonical, false});
  }

  /// Whether the job cannot reach `canonical`, nor anything beneath it, already: it lies in a
  /// root (a connect through the overlay is refused), in a directory the job has its own of,
  /// or under a cover (another user's home costs no mount).
  bool OutOfSight(const std::string& canonical) const {
    for (const auto& root : request_.roots)
      if (PathHolds(root.real_path, canonical)) return true;
    for (const auto& dir : request_.private_dirs)
      if (PathHolds(dir, canonical)) return true;
    return covers_ && Covered(*covers_, canonical);
  }

  /// Sorted; a path equal to or beneath an earlier kept one is dropped (a prefix sorts first).
  std::vector<HiddenEntry> Take() {
    std::sort(entries_.begin(), entries_.end(),
              [](const HiddenEntry& a, const HiddenEntry& b) { return a.path < b.path; });
    std::vector<HiddenEntry> kept;
    for (auto& entry : entries_) {
      bool covered = std::any_of(kept.begin(), kept.end(), [&](const HiddenEntry& k) { return PathHolds(k.path, entry.path); });
      if (!covered) kept.push_back(std::move(entry));
    }
    return kept;
  }

 private:
  const HiddenPathsRequest& request_;
  const std::vector<BwrapCover>* covers_ = nullptr;
  std::vector<HiddenEntry> entries_;
};

/// True when `path` and the owner's home `own_home` (both canonical) are one, or one holds the
/// other: the owner's, not another user's.
bool OwnersOwn(const std::string& path, const std::string& own_home) {
  return PathHolds(path, own_home) || PathHolds(own_home, path);
}

/// The symlinks directly in `cover`'s directory, {path, target}; what else it holds needs no
/// look: the cover has it out of sight whatever it is.
std::vector<std::pair<std::string, std::string>> SymlinksIn(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> links;
  DirectoryListing listing = DirectoryListing::AtPath(dir);
  if (!listing) {
    if (errno == ENOENT) return links;
    ThrowErrno("cannot list " + dir);
  }
  while (const dirent* entry = listing.Next()) {
    if (entry->d_type != DT_LNK && entry->d_type != DT_UNKNOWN) continue;
    std::string path = dir + "/" + entry->d_name;
    char target[PATH_MAX];
    ssize_t size = readlinkat(listing.fd(), entry->d_name, target, sizeof target);
    if (size < 0) {
      if (errno == EINVAL || errno == ENOENT) continue;  // not a symlink (DT_UNKNOWN), or gone
      ThrowErrno("cannot read symlink " + path);
    }
    links.emplace_back(path, std::string(target, static_cast<size_t>(size)));
  }
  if (errno != 0) ThrowErrno("cannot list " + dir);
  return links;
}

}  // namespace

std::optional<std::string> HiddenPathSyntaxError(const std::string& entry, bool allow_home) {
  if (entry.empty()) return "it is empty";
  if (entry.find('\0') != std::string::npos) return "it contains a NUL byte";
  if (entry.size() >= PATH_MAX) return "it is longer than PATH_MAX";
  bool home = allow_home && entry.rfind("~/", 0) == 0;
  if (!home && entry.front() != '/')
    return allow_home ? "it is neither absolute nor under ~/" : "it is not an absolute path";
  // ".." would let a lexical "~/../bob" or "/home/u/../../etc" mean something else once
  // symlinks are resolved; nothing needs it.
  size_t start = home ? 2 : 1;
  while (start <= entry.size()) {
    size_t end = entry.find('/', start);
    if (end == std::string::npos) end = entry.size();
    if (entry.compare(start, end - start, "..") == 0) return "it has a \"..\" component";
    start = end + 1;
  }
  return std::nullopt;
}

void CheckHiddenPathsHoldNoRoot(const std::vector<std::string>& paths, const std::vector<std::string>& roots,
                                const UserCredentials& owner) {
  for (const auto& path : paths) {
    std::optional<std::string> canonical;
    {
      ScopedFileSystemIdentity identity(owner);
      canonical = Canonical(path, /*unreachable_is_missing=*/true);
    }
    if (!canonical) continue;  // nothing the owner (and so a job) could reach
    for (const auto& root : roots)
      if (PathHolds(*canonical, root))
        throw Error(Code::kInvalidPath, "cannot hide " + path + " in a new sandbox: it holds root " + root);
  }
}

std::vector<std::string> DefaultHomeParents(const std::string& owner_home) {
  std::vector<std::string> parents = {"/home"};
  auto home = Canonical(owner_home);
  if (!home) return parents;
  std::string parent = home->substr(0, home->rfind('/'));
  if (parent.empty()) return parents;  // a home right under "/" (or "/" itself)
  // Service accounts live in system trees (/var/lib/foo, /run/foo, /nonexistent): their
  // neighbours are the system, not other people's homes.
  static constexpr std::array<const char*, 17> kSystemTrees = {
      "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
      "/proc", "/root", "/run", "/sbin", "/sys", "/tmp", "/usr", "/var"};
  for (const char* tree : kSystemTrees)
    if (PathHolds(tree, parent)) return parents;
  auto canonical_home_dir = Canonical("/home");
  if (canonical_home_dir && *canonical_home_dir == parent) return parents;
  parents.push_back(parent);
  return parents;
}

HiddenPaths ResolveHiddenPaths(const HiddenPathsRequest& request) {
  HiddenPaths hidden;
  Collector collector(request);
  // Compared canonically, so a home reached through a symlink (/home/alice -> /data/alice) is
  // still recognised as the owner's.
  const std::string own_home = Canonical(request.owner_home).value_or(request.owner_home);
  // Home parents that lie in a root: their entries are hidden one by one, in the root's view
  // (and those no cover can be made for).
  std::vector<std::string> in_roots;
  if (request.hide_other_homes) {
    std::vector<std::string> parents;
    for (const auto& given : request.home_parents) {
      auto parent = Canonical(given);
      // The owner's home itself, or inside it: nothing there is another user's.
      if (!parent || PathHolds(own_home, *parent)) continue;
      bool in_root = std::any_of(request.roots.begin(), request.roots.end(),
                                 [&](const BwrapRoot& root) { return PathHolds(root.real_path, *parent); });
      // (Never from DefaultHomeParents:) a tmpfs over "/" or over a tree holding the job's
      // private directories would take the system away from the job.
      bool holds_system = *parent == "/" || std::any_of(request.private_dirs.begin(), request.private_dirs.end(),
                                                        [&](const std::string& dir) { return PathHolds(*parent, dir); });
      if (in_root || holds_system) {
        in_roots.push_back(*parent);
        continue;
      }
      // The job has its own empty one: none of the host's entries is there to see.
      if (std::any_of(request.private_dirs.begin(), request.private_dirs.end(),
                      [&](const std::string& dir) { return PathHolds(dir, *parent); }))
        continue;
      parents.push_back(*parent);
    }
    // One cover for /home holds /home/staff's homes too (a prefix sorts first).
    std::sort(parents.begin(), parents.end());
    for (const auto& parent : parents) {
      if (!hidden.covers.empty() && PathHolds(hidden.covers.back().path, parent)) continue;
      BwrapCover cover{parent, {}, {}};
      // The owner's home is bound back at its own path, the only home the job sees there.
      struct stat st;
      if (own_home != parent && PathHolds(parent, own_home) && lstat(own_home.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        cover.binds.push_back(own_home);
      hidden.covers.push_back(std::move(cover));
    }
  }
  collector.SetCovers(&hidden.covers);
  for (const auto& path : request.explicit_paths) {
    if (auto why = HiddenPathSyntaxError(path, /*allow_home=*/false))
      throw Error(Code::kInvalidPath, "cannot hide " + path + " in sandbox " + request.sandbox_id + ": " + *why);
    collector.Add(path, path, /*explicitly=*/true, /*owners=*/true);
  }
  for (const auto& entry : request.configured) {
    if (auto why = HiddenPathSyntaxError(entry, /*allow_home=*/true))
      throw Error(Code::kInvalidArgument, "configured hidden path " + entry + " is refused: " + *why);
    collector.Add(ExpandHome(entry, request.owner_home), entry, false, /*owners=*/entry.rfind("~/", 0) == 0);
  }
  for (const auto& path : request.always) {
    if (auto why = HiddenPathSyntaxError(path, /*allow_home=*/false))
      throw Error(Code::kInvalidArgument, "always-hidden path " + path + " is refused: " + *why);
    collector.Add(path, path, false);
  }
  if (request.hide_other_homes) {
    // Entries around or inside the owner's home (the home parent's own ancestors, a link into
    // the home) are the owner's, not someone else's.
    auto add_other = [&](const std::string& path) {
      auto canonical = Canonical(path);
      if (!canonical || OwnersOwn(*canonical, own_home)) return;
      collector.Add(path, path, false);
    };
    for (auto& cover : hidden.covers) {
      // The cover hides its entries wherever they are, but a symlink's target lies elsewhere:
      // one leading out of every cover is hidden there (as before covers), one leading to the
      // owner's home is made again (the owner's $HOME may be such a link).
      for (auto& [path, target] : SymlinksIn(cover.path)) {
        auto canonical = Canonical(path);
        if (!canonical) continue;  // dangling: nothing to see through it
        if (OwnersOwn(*canonical, own_home))
          cover.symlinks.emplace_back(std::move(path), std::move(target));
        else if (!std::any_of(hidden.covers.begin(), hidden.covers.end(),
                              [&](const BwrapCover& other) { return PathHolds(other.path, *canonical); }))
          add_other(path);
      }
      std::sort(cover.symlinks.begin(), cover.symlinks.end());
    }
    for (const auto& parent : in_roots)
      for (const auto& name : ListDirectory(parent)) add_other(parent + "/" + name);
    // Root's home is an other home too, unless the owner is root.
    if (request.owner_uid != 0) add_other(request.root_home);
  }
  if (request.owner_identity) {
    // A host has sockets by the hundred, nearly all in directories out of a job's sight already
    // (its own /run and /tmp, another user's home): their directories are looked up once each
    // (as root: a path resolves the same for the owner, or not at all), and only the sockets
    // of the others one by one as the owner, with the owner's identity. Each looked up alone
    // so, 300 sockets in /run made every job 5 ms slower. A name there that is a symlink now
    // (the socket replaced by a link elsewhere) is followed as before.
    std::map<std::string, bool> out_of_sight;  // a directory as listed → whether it is
    for (const auto& path : request.sockets) {
      const std::string dir = path.substr(0, std::max<size_t>(path.rfind('/'), 1));
      auto [known, added] = out_of_sight.try_emplace(dir, false);
      if (added) {
        // Any failure to look it up (gone, or a dead mount on the way) leaves its sockets to be
        // looked up one by one, as they were before: never a job that cannot start for it.
        char resolved[PATH_MAX];
        known->second = realpath(dir.c_str(), resolved) != nullptr && collector.OutOfSight(resolved);
      }
      struct stat st;
      if (!known->second || (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))) collector.AddSocket(path);
    }
  }
  hidden.entries = collector.Take();
  return hidden;
}

std::vector<std::string> HiddenPathsBwrapArgs(const std::vector<HiddenEntry>& entries, const std::string& empty_file) {
  std::vector<std::string> args;
  for (const auto& entry : entries) {
    if (entry.directory) {
      // An empty tmpfs of mode 0000: the job (which owns it inside its user namespace) cannot
      // list or enter it; read-only, so it cannot chmod it back or plant files in it. The mount
      // cannot be removed: the job has no capabilities, and a nested user namespace sees it
      // locked (verified with bwrap 0.8.0: umount EINVAL, remount rw EPERM).
      args.insert(args.end(), {"--perms", "0000", "--tmpfs", entry.path, "--remount-ro", entry.path});
    } else {
      // Root-owned and mode 0000: root is not mapped in the job's user namespace, so not even
      // a nested user namespace can read it; the read-only bind stops chmod, writes and rename.
      args.insert(args.end(), {"--ro-bind", empty_file, entry.path});
    }
  }
  return args;
}

}  // namespace sandboxd
