#pragma once
/// Which content a decision was made on. A decision about a change holds only while the change
/// is the one the owner saw, known by its fingerprint: "u" + the upper entry's stamp + "|l" +
/// the live entry's stamp, each naming inode, mode, size, mtime and ctime. A job cannot forge a
/// ctime, so any write to either side (even one that puts the mtime back) makes another
/// fingerprint and the decision lapses.
///
/// An archive round trip (suspend, resume) gives every upper entry a new inode and ctime while
/// keeping its content, mode and mtime; so a decision that held when the layers were archived is
/// carried in an archive fingerprint, "s" + what the archive keeps of the upper entry + "|l" +
/// the live stamp, and pinned again to the restored entry (decision_pins.h).

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>

namespace sandboxd {

/// The stamp of the entry at `path` beneath `root_fd` ("-" when there is none).
std::string EntryStamp(int root_fd, const std::string& path);
/// What an archive keeps of that entry: kind, mode, size and mtime.
std::string ArchivedStamp(int root_fd, const std::string& path);

/// Whether two upper stamps say the same of the sandbox's side: equal, or both that it has no
/// entry there (none, "-": hidden by an opaque directory above; or a whiteout). A commit that
/// takes part of a directory the job made anew turns the one into the other for what it leaves
/// hidden (the directory is no longer opaque, each entry still deleted gets a whiteout), and an
/// undo turns it back: a decision on such a deletion is about the same change.
bool SameSandboxSide(const std::string& then, const std::string& now);

/// Whether live stamp `now` is `then` but for its ctime, on one of `inodes`: what commit work on
/// another name of the same inode does to it (its link count moves), and nothing else does
/// without moving more (a write moves the mtime, a chmod the mode; DESIGN, "Conflicts").
bool MovedOnlyByLinkWork(const std::string& then, const std::string& now, const std::set<ino_t>& inodes);

/// The live side of a change's fingerprint: EntryStamp, but "git-data" for a repository's own
/// data (git_data.h). A live `git status` rewrites the index at will, and any live git command
/// makes object directories, without changing what the sandbox's data is; what the owner decides
/// on is the sandbox's side, and the live one is judged at the commit (conflicts; for the index,
/// by what it stages: changes/git_index_sights.h, so a live `git add` is a conflict).
std::string LiveSideStamp(int live_root_fd, const std::string& path);

/// The identity of a change as it is now: "u<upper stamp>|l<live side stamp>".
std::string ChangeFingerprint(int live_root_fd, int upper_root_fd, const std::string& path);

/// A fingerprint's parts: kind ('u' live, 's' archived), upper part, live part.
struct FingerprintParts {
  char kind = 'u';
  std::string upper;
  std::string live;
};
std::optional<FingerprintParts> SplitFingerprint(const std::string& fingerprint);
std::string JoinFingerprint(const FingerprintParts& parts);

}  // namespace sandboxd
