#pragma once
/// What a repository's index stages, apart from what it caches. `.git/index` holds both: the
/// entries (path, mode, object id, stage, intent-to-add, skip-worktree) and the conflicts' undo
/// record are what a commit will take; the stat data of each entry and the cache-tree and
/// untracked-cache extensions only spare git a re-read, and any `git status` rewrites them. So a
/// live index whose staged digest is the one the sandbox saw was only refreshed: the owner
/// staged nothing a sandbox's index would take back (changes/git_index_sights.h). Read with
/// libgit2 in sandboxd-text-helper, as the owner.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace sandboxd {

struct StagedIndex {
  /// "sha256:<hex>" of what it stages; "" when there is no such file, the owner cannot read it,
  /// or libgit2 cannot parse it (a newer format, a split or sparse index, a bad checksum): it
  /// then matches nothing.
  std::string digest;
  /// The file read, as it was once read: a digest belongs to this inode and ctime only.
  ino_t ino = 0;
  int64_t ctime_ns = 0;
};

/// What the index file at `path` beneath `dirfd` stages (opened beneath it, never through a
/// symlink).
StagedIndex StagedDigest(int dirfd, const std::string& path);

}  // namespace sandboxd
