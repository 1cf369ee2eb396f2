#pragma once
/// Decides which host paths a job must not see (the owner's secret stores, other users' homes,
/// the job's own --hide paths) and turns them into the bubblewrap arguments that empty them.
/// Other users' homes cost one mount per directory of homes, not one per home: a job's start
/// must not grow with the host's users (issue 41).
/// It only reads the host (lstat, realpath, listing the home parents); it never changes it.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "jobs/bwrap_args.h"

namespace sandboxd {

/// One path the job sees empty and unreadable.
struct HiddenEntry {
  std::string path;        ///< canonical on the host (no symlinks, no "." or "..")
  bool directory = false;  ///< a directory gets an empty tmpfs, anything else the empty file

  bool operator==(const HiddenEntry&) const = default;
};

struct HiddenPathsRequest {
  std::string sandbox_id;  ///< for messages only
  uid_t owner_uid = 0;
  std::string owner_home;  ///< from passwd; "~/" expands to it
  /// The sandbox's roots: real_path is canonical; merged is where the job's view of that root
  /// can be read on the host (empty: read real_path). A hidden path inside a root is looked up
  /// in the merged view, because that, not the live tree, is what the job sees there.
  std::vector<BwrapRoot> roots;
  /// JobsConfig::hidden_paths: absolute or "~/...". Skipped when they hold a root.
  std::vector<std::string> configured;
  /// Other users' homes: each directory of `home_parents` becomes one cover (bwrap_args.h)
  /// showing only the owner's home, and `root_home` is hidden.
  bool hide_other_homes = true;
  /// The job's --hide paths, absolute. Refused (kInvalidPath) when they hold a root.
  std::vector<std::string> explicit_paths;
  /// Hidden whatever the configuration says: the daemon's run directory, whose merged views
  /// would otherwise show a job every path hidden inside its roots.
  std::vector<std::string> always;
  /// Directories whose entries are users' homes; see DefaultHomeParents.
  std::vector<std::string> home_parents = {"/home"};
  std::string root_home = "/root";  ///< hidden as another home unless the owner is root
  /// Unix sockets the host has bound by a path (host_sockets.h): each that the owner can reach
  /// is hidden, unless it lies in a root (a connect through the overlay is refused already), in
  /// a private directory, or is one of `allowed_sockets`. Whatever cannot be looked up is
  /// skipped (a socket's path is any process's to choose: it must not fail other users' jobs).
  std::vector<std::string> sockets;
  /// Canonical paths of the sockets the owner named (--allow-socket): never hidden.
  std::vector<std::string> allowed_sockets;
  /// The job's own empty directories (bwrap_args.h): outside the roots, nothing beneath them
  /// needs hiding.
  std::vector<std::string> private_dirs = kJobPrivateDirs;
  /// When given (the daemon always gives it), the explicit paths and the configured "~/" ones
  /// are looked up with the owner's file-system identity (fs_identity.h): a path the owner
  /// cannot reach is nothing to hide (the job, which runs as the owner, cannot reach it
  /// either), so the job's mount table never tells whether it exists; and a home on NFS with
  /// root squashed is read as its owner can read it.
  std::optional<UserCredentials> owner_identity;
};

/// Lexical check of one hidden-path entry: absolute (or "~/..." when `allow_home`), no ".."
/// component, no NUL ("." and "//" are fine: realpath removes them). Returns why it is
/// refused, or nullopt.
std::optional<std::string> HiddenPathSyntaxError(const std::string& entry, bool allow_home);

/// For `create --hide`: refuses (Error kInvalidPath, naming the path and the root) a path that
/// holds one of the canonical `roots` once resolved, which would refuse every job of the new
/// sandbox. Resolved with `owner`'s file-system identity, never root's: a path the owner cannot
/// reach is nothing to hide (as in ResolveHiddenPaths), and a refusal must not tell the owner
/// where a symlink in a directory only root may read points, or that it exists.
void CheckHiddenPathsHoldNoRoot(const std::vector<std::string>& paths, const std::vector<std::string>& roots,
                                const UserCredentials& owner);

/// {"/home"} plus the parent of the owner's home when that is another directory holding homes
/// (e.g. /srv/home for /srv/home/alice). The parent is left out when the home is missing or its
/// parent is "/" or a system tree (/usr, /var, /etc, /run, ...): nobody's /nonexistent or a
/// service account's /var/lib/foo must not hide /var/lib from the job.
std::vector<std::string> DefaultHomeParents(const std::string& owner_home);

/// What a job must not see, as the mounts that empty it.
struct HiddenPaths {
  /// The directories of homes, sorted, none inside another: one tmpfs each, holding the owner's
  /// home (bound back) and the symlinks of that directory that lead to it or into it.
  std::vector<BwrapCover> covers;
  /// The paths hidden one by one on top of the roots and covers (HiddenPathsBwrapArgs).
  std::vector<HiddenEntry> entries;
};

/// The covers and the paths to hide. Paths: sorted, without duplicates or paths nested in
/// another hidden path, and without what a cover hides already (what lies in a cover but not
/// in the owner's home or a root: bwrap could not make a mount point there either).
/// "~/" expands to the owner's home; each path is resolved to its canonical target on the
/// host (a symlinked ~/.ssh hides where it points); missing paths are skipped.
/// Other homes (when asked): each of `home_parents` that exists, canonical, becomes a cover,
/// unless it is the owner's home or lies in it (nothing of another user's there), lies in a
/// private directory (the job has its own), or lies in a root (the root's bind would cover
/// the cover: then its entries are hidden one by one as paths, in the root's merged view, but
/// for the owner's home and what contains or lies in it). A symlink in a cover that leads out
/// of every cover is hidden where it leads, unless that holds or lies in the owner's home
/// (then it is made again in the cover). `root_home` is hidden as a path unless the owner is
/// root.
/// An explicit path that is relative or has ".." components, or that equals or contains a
/// root, throws Error(kInvalidPath) naming it (and the root); a configured, other-home or
/// always path that holds a root is skipped: the owner chose to sandbox it. A path that exists
/// but cannot be looked up (EACCES, EIO...) throws Error(kFailed): failing closed beats showing
/// a secret.
/// Without `owner_identity`, paths are looked up with the caller's (root's) eyes: a job could
/// then learn from its mount table whether a path it could not reach exists (e.g. ~/.ssh ->
/// /home/bob/.ssh/id_rsa with HideOtherHomes=no). With it, that cannot happen.
HiddenPaths ResolveHiddenPaths(const HiddenPathsRequest& request);

/// The bwrap arguments that hide `entries`, to be placed after the root binds so that paths
/// inside roots are hidden on top of the merged view. A directory becomes
/// `--perms 0000 --tmpfs P --remount-ro P`, anything else `--ro-bind EMPTY_FILE P`, where
/// `empty_file` is an empty, root-owned, mode-0000 file whose directory every owner can search.
std::vector<std::string> HiddenPathsBwrapArgs(const std::vector<HiddenEntry>& entries, const std::string& empty_file);

}  // namespace sandboxd
