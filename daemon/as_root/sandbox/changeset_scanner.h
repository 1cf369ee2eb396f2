#pragma once
/// Computes one root's change set from its overlay upper layer, compared with the live
/// directory (the lower). Its cost grows with the upper (plus the lower directories an opaque
/// directory hides), never with the size of the root. It only reads, never follows a symlink
/// in either tree, and never resolves a multi-component path in the lower.
///
/// The live side is read with the owner's eyes (DESIGN, "Security model": the live side of every
/// comparison is read with the owner's credentials): each lookup, listing and open of the live
/// tree is made with the owner's file-system identity (helper_clients/fs_identity.h), on the scanning
/// thread only, so the change set never shows what the owner could not see on the host. The
/// rule for what the owner cannot see:
/// - a live directory the owner cannot open (list) hides nothing and shows nothing: the upper's
///   entries beneath it are compared with no live entry (added), and no live entry beneath it
///   is listed as deleted, even under an opaque directory (its own deletion, where its parent
///   can be read, is one `D` line, its name and mode as `ls -l` of the parent shows them);
/// - a live entry the owner cannot look up (EACCES) counts as absent;
/// - a regular file of the same size on both sides whose content the owner cannot read (either
///   side: the upper may hold a copy of a root-only file that a job renamed; a file the owner
///   owns counts as readable, a chmod being theirs) is compared by metadata only, never by
///   content: it is `modified`. Whether its bytes equal the job's never decides the kind, so
///   no kind (nor its diff) is an oracle of unreadable content.
/// The upper layer is otherwise read as the daemon (its entries are the sandbox's own).

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/credentials.h"
#include "model/change.h"
#include "sandbox/content_verdicts.h"

namespace sandboxd {

/// `lower_dirfd` and `upper_dirfd` are directory fds (O_PATH is fine) of the live root and of
/// the upper layer; `owner` is whose eyes the live side is read with (the sandbox's owner; a
/// caller that is not root reads as itself and passes its own uid). Throws Error(kAccessDenied)
/// when the owner cannot open the live root itself. The overlay must use redirect_dir=off and
/// metacopy=off, so that the upper holds whole entries, whiteouts (char devices 0/0) and opaque
/// directories only.
/// Result sorted by path, parents before children. Throws Error(kFailed) naming the path on
/// an I/O error; an entry that vanishes during the scan is skipped. With `verdicts`, content
/// comparisons of same-size files are looked up there first and remembered after. With
/// `multi_linked`, the paths of the upper's regular files with more than one link are added to it.
std::vector<Change> ScanChanges(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, ContentVerdicts* verdicts = nullptr,
                                std::set<std::string>* multi_linked = nullptr);

/// Receives each change of a streaming scan in turn.
using ChangeVisitor = std::function<void(Change&&)>;

/// The same scan without holding the change set: each change goes to `visit` as soon as it is
/// known, in the same order (byte order of path, "." first). What the scan holds grows with
/// the depth of the tree and its largest directory, never with the change set. An exception
/// from `visit` ends the scan.
void ScanChanges(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, const ChangeVisitor& visit,
                 ContentVerdicts* verdicts = nullptr,
                 std::set<std::string>* multi_linked = nullptr);

/// What a streaming scan saw of a change's upper entry besides the change: when it last changed
/// (its ctime, ns since the epoch), its inode number and link count (all 0 for a deletion of a
/// live entry an opaque directory hides, which has no upper entry); and the sizes (st_size) of
/// the change's two sides as it stat'ed them, 0 for a side that does not exist.
struct UpperEntry {
  int64_t ctime_ns = 0;
  ino_t ino = 0;
  nlink_t nlink = 0;
  uint64_t old_size = 0;  ///< the live entry's
  uint64_t new_size = 0;  ///< the upper entry's
};

/// Receives each change of a streaming scan with its upper entry as the scan saw it.
using TimedChangeVisitor = std::function<void(Change&&, const UpperEntry& upper)>;

/// The streaming scan with each change's upper entry: what changed after a moment (a job's
/// start) is told from what did not, and a commit plans, without a second stat.
void ScanChangesTimed(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, const TimedChangeVisitor& visit,
                      ContentVerdicts* verdicts = nullptr,
                      std::set<std::string>* multi_linked = nullptr);

/// The change one path (relative to the roots; "." the roots' own entry: its mode) holds
/// now, as ScanChanges lists it: a directory's own change only, never its entries'. Nothing when the path does not differ from
/// the live tree or is in neither. Parents are opened beneath the roots without following a
/// symlink (the job may swap a directory for one at any time). Same-size files larger than
/// `compare_limit` bytes are called modified without reading them. What the live change feed
/// (change_feed.h) asks of each path a job touched, while the job runs.
std::optional<Change> ScanOnePath(int lower_dirfd, int upper_dirfd, const UserCredentials& owner, const std::string& path,
                                  uint64_t compare_limit);

/// Whether the upper directory `dirfd` (O_PATH is fine) is opaque: it hides every lower entry
/// below it.
bool IsOpaque(int dirfd);

/// The deletions of ScanChanges alone, in the same order: what a rename may pair, found by a
/// walk of the upper's directories that stats its char devices only (whiteouts), never its
/// files, and lists the live directories an opaque one hides. About as cheap as find(1).
std::vector<Change> ScanDeletions(int lower_dirfd, int upper_dirfd, const UserCredentials& owner);

}  // namespace sandboxd
