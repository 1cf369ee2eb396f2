#pragma once
/// Staging for a commit that takes only part of a sandbox's changes. The entries that go live
/// move (rename, same file system) from the sandbox's upper layer into a stage directory that
/// mirrors their paths, files merged from approved hunks are written there too, and the
/// journaled commit then works on the stage as it would on a whole upper: what is not committed
/// never leaves the upper. After the commit the stage holds the replaced live entries (the
/// commit's backups). A commit taken back, or cut off before it was journaled, puts the staged
/// entries back (Unstage). Runs in the daemon on its own directories; paths are opened beneath
/// their directory fds without following symlinks.

#include <sys/types.h>

#include <functional>
#include <set>
#include <vector>

#include "unique_fd.h"
#include "model/change.h"
#include "model/commit_step.h"

namespace sandboxd {

/// Moves into `stage_fd` the upper entries of `changes` that go live: non-directories (files,
/// symlinks, fifos; a file whose mode alone changed too: the commit sets the live one's mode,
/// and a copy left in the upper would no longer follow the live file) and the whiteouts of
/// deletions. Directories are made in the stage (the commit makes its own live directories;
/// upper directories stay, they may hold changes that are not committed). Directories the
/// stage needs are owned by `uid`/`gid`, mode 0700.
void StageEntries(int upper_fd, int stage_fd, const std::vector<Change>& changes, uid_t uid, gid_t gid);

/// Creates an empty file at `path` in the stage with the owner of the upper entry at `path` and
/// the mode of the live one (a mode change is no hunk: it goes live with the whole file), for
/// the merged content of a partly approved file; returns it open for writing.
UniqueFd CreateStagedFile(int upper_fd, int live_fd, int stage_fd, const std::string& path, uid_t uid, gid_t gid);

/// Puts every staged non-directory back into the upper where the upper has nothing at its path;
/// a staged entry whose path the upper still holds (a merged file) is deleted. Directories the
/// upper lacks are made as the stage has them (owner, mode, opaque mark); an opaque mark on a
/// stage directory (SettleUpperAfterCommit) goes back onto the upper's. Idempotent.
void Unstage(int upper_fd, int stage_fd);

/// After a staged commit went live: an opaque upper directory the commit touched (one it made,
/// or one holding or above a path it committed) would hide the committed entries now in the
/// live directory. It loses its opaque mark, and each live entry in it that the sandbox still
/// has deleted (a deletion not committed) gets a whiteout instead, so that the sandbox shows
/// exactly what it showed before, less what went live. The mark is copied onto the same
/// directory in the stage (made, owned by `uid`/`gid`, where missing), where Unstage finds it
/// if the commit is undone. Overlay's index entries of the entries that went live are removed
/// (they are links to those inodes). `index_fd` may be -1 when the overlay has no index.
/// Idempotent.
/// Removes overlay's index entries (links kept by the index of a copied-up inode, named by its
/// origin) of the non-directory `inodes`: otherwise the next mount would show such an inode,
/// no longer the sandbox's, under every lower name of its origin. `index_fd` may be -1.
void ForgetIndexEntries(int index_fd, const std::set<ino_t>& inodes);
/// Removes every regular file beneath upper directory `upper_fd` whose inode is one of
/// `inodes`: the names a commit left in the upper of files it took live under their other
/// names (names linked up beside a committed hard link, unchanged themselves), which would
/// otherwise keep showing the sandbox's inode, no longer one with the live file. Returns their
/// paths. Throws Error.
std::vector<std::string> DropNamesOf(int upper_fd, const std::set<ino_t>& inodes);
/// The same for names of the sandbox's own files whose originals a commit keeps in its stage
/// (`stage_fd`): each name moves to its path in the stage (its directories made as the upper has
/// them, else owned by `uid`/`gid`), where an undo's Unstage finds it and gives it back beside
/// the original, one file again. Idempotent. Returns their paths. Throws Error.
std::vector<std::string> StashNamesOf(int upper_fd, int stage_fd, const std::set<ino_t>& inodes, uid_t uid, gid_t gid);
/// The inodes of every non-directory beneath directory `dir_fd` (never through a symlink); with
/// `linked_only`, of those with more than one link; with `among`, of those among them.
std::set<ino_t> FileInodesBeneath(int dir_fd, bool linked_only = false, const std::set<ino_t>* among = nullptr);
/// The inodes overlay's index (`index_fd`, -1 for none) links.
std::set<ino_t> IndexInodes(int index_fd);

/// A root's steps of a commit, handed to the visitor a page at a time (each call reads them anew).
using StepPages = std::function<void(const std::function<void(const std::vector<CommitStep>&)>&)>;
void SettleUpperAfterCommit(int upper_fd, int live_fd, int stage_fd, int index_fd, const StepPages& root_steps, uid_t uid, gid_t gid);
void SettleUpperAfterCommit(int upper_fd, int live_fd, int stage_fd, int index_fd, const std::vector<CommitStep>& root_steps,
                            uid_t uid, gid_t gid);

}  // namespace sandboxd
